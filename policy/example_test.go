package policy_test

import (
	"fmt"
	"time"

	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/policy"
)

// A host tightens the zero Policy: it does not trust one issuer for
// negotiation, and never downgrades MCP. The hooks narrow what the zero
// value allows; they cannot make an anonymous caller authenticated.
func ExamplePolicy() {
	p := policy.Policy{
		Authenticated: func(s *policy.Subject) bool { return s.Issuer != "https://legacy-idp.example" },
		DowngradeDenied: func(d policy.Downgrade) bool {
			return d.Protocol == facets.ProtocolMCP
		},
		Now: func() time.Time { return time.Date(2026, 11, 29, 13, 0, 0, 0, time.FixedZone("CET", 3600)) },
	}

	user := &policy.Subject{Issuer: "https://idp.example", SubjectID: "u-42", Tenant: "acme", Lane: policy.LaneOIDC, Kind: policy.KindUser}
	legacy := &policy.Subject{Issuer: "https://legacy-idp.example", SubjectID: "u-7", Tenant: "acme", Lane: policy.LaneAPIKey, Kind: policy.KindUser}
	forwarded := &policy.Subject{Issuer: "urn:host.example:anon-surface", SubjectID: "anon-1", Tenant: "acme",
		Lane: policy.LaneAnonymous, Kind: policy.KindAnonymous, Actor: user}

	for _, s := range []*policy.Subject{user, legacy, forwarded, nil} {
		fmt.Println(p.IsAuthenticated(s), policy.Policy{}.IsAuthenticated(s))
	}
	fmt.Println(p.DeniesDowngrade(policy.Downgrade{Subject: user, Protocol: facets.ProtocolA2A, From: "1.2", To: "1.1"}))
	fmt.Println(p.DeniesDowngrade(policy.Downgrade{Subject: user, Protocol: facets.ProtocolMCP, From: "2026-07-28", To: "2025-11-25"}))
	fmt.Println(p.Time())

	bad := &policy.Subject{Issuer: "https://idp.example", SubjectID: "users/42", Tenant: "acme", Lane: policy.LaneSAML, Kind: policy.KindUser}
	fmt.Println(bad.Validate())
	// Output:
	// true true
	// false true
	// false false
	// false false
	// false
	// true
	// 2026-11-29 12:00:00 +0000 UTC
	// invalid subject: subject.subjectId: "users/42" contains whitespace or '/'; subject.keyClass: is missing; lane saml requires a keyClass
}
