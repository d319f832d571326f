package mcphttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/policy"
)

// tenantSubject is the Subject of "Authorization: Bearer tenant:<name>":
// an identified caller of that tenant.
func tenantSubject(r *http.Request) *negotiate.Subject {
	name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer tenant:")
	if !ok {
		return nil
	}
	return &negotiate.Subject{Issuer: "https://idp.example", SubjectID: "u-" + name, Tenant: name, Lane: policy.LaneOIDC, Kind: policy.KindUser}
}

// TestOneTenantCannotEvictAnothersPins: with MaxSessions 8, a tenant
// holding 3 pins keeps every one of them through 20 initializes by an
// identified caller of another tenant, whose own pins take the rest of
// the store and turn over among themselves; and a third tenant arriving
// takes its share from the tenant holding the most, never from the one
// holding the least.
func TestOneTenantCannotEvictAnothersPins(t *testing.T) {
	r := newRig(t, legacyFacets(), policy.Policy{}, true, func(o *mcphttp.Options) {
		o.MaxSessions = 8
		o.Subject = tenantSubject
	})
	var acme []string
	for range 3 {
		acme = append(acme, initializeOn(t, r, "2025-06-18", "Bearer tenant:acme"))
	}
	var umbra []string
	for range 20 {
		umbra = append(umbra, initializeOn(t, r, "2025-11-25", "Bearer tenant:umbra"))
	}
	if got := mcphttp.Sessions(r.h); got != 8 {
		t.Errorf("%d sessions, want the bound 8", got)
	}
	for _, sid := range acme {
		if a := r.do(onSession(sid, "2025-06-18", "Bearer tenant:acme")); a.status != http.StatusOK {
			t.Errorf("acme's pin %s after umbra's initializes: %d %s", sid, a.status, a.body)
		}
	}
	for i, sid := range umbra {
		a := r.do(onSession(sid, "2025-11-25", "Bearer tenant:umbra"))
		if kept := i >= len(umbra)-5; kept != (a.status == http.StatusOK) {
			t.Errorf("umbra's session %d of %d: %d %s, want kept %v (its 5 most recent)", i+1, len(umbra), a.status, a.body, kept)
		}
	}
	// A third tenant's session evicts umbra's oldest (umbra holds 5,
	// acme 3), not acme's.
	initializeOn(t, r, "2025-11-25", "Bearer tenant:zeta")
	for _, sid := range acme {
		if a := r.do(onSession(sid, "2025-06-18", "Bearer tenant:acme")); a.status != http.StatusOK {
			t.Errorf("acme's pin %s after a third tenant came: %d %s", sid, a.status, a.body)
		}
	}
	if a := r.do(onSession(umbra[len(umbra)-5], "2025-11-25", "Bearer tenant:umbra")); a.status != http.StatusNotFound {
		t.Errorf("umbra's least recently used session after a third tenant came: %d, want 404", a.status)
	}
}
