package a2agrpc_test

import (
	"bytes"
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/wopneg/wopneg/a2agrpc"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/policy"
)

// TestInvalidSubject: a Subject that breaks the schema is the host's
// fault: logged and decided as unauthenticated, or refused as an
// internal error, undecided and unrecorded, under StrictSubject.
func TestInvalidSubject(t *testing.T) {
	invalid := func(context.Context, metadata.MD) *negotiate.Subject { return &negotiate.Subject{SubjectID: "x"} }
	for _, strict := range []bool{false, true} {
		var log bytes.Buffer
		h := startHost(t, "0.3", policy.Policy{}, agent{}, func(o *a2agrpc.Options) {
			o.Subject, o.StrictSubject = invalid, strict
			o.ErrorLog = slog.New(slog.NewTextHandler(&log, nil))
		})
		st := raw(t, h, metadata.Pairs("a2a-version", "0.3"))
		if !strings.Contains(log.String(), "wopneg: invalid Subject: ") {
			t.Errorf("strict %t: logged %q", strict, log.String())
		}
		if strict {
			if st.Code() != codes.Internal || !strings.Contains(st.Message(), "the caller's Subject is invalid") || len(h.rec.Events()) != 0 {
				t.Errorf("strict: %v, %d events", st, len(h.rec.Events()))
			}
			continue
		}
		want := []events.NegotiationDecided{refused("0.3", events.ReasonUnauthenticated, "0.3")}
		if got := h.payloads(); st.Code() != codes.FailedPrecondition || !reflect.DeepEqual(got, want) {
			t.Errorf("%v, recorded %+v", st, got)
		}
	}
}

// TestValidSubject: a valid Subject is the caller's: served below the
// preferred version.
func TestValidSubject(t *testing.T) {
	h := startHost(t, "0.3", policy.Policy{}, agent{})
	if st := raw(t, h, metadata.Pairs("a2a-version", "0.3", "authorization", token)); st.Code() != codes.OK {
		t.Fatal(st)
	}
	if got := h.seen.all(); !reflect.DeepEqual(got, []string{"0.3"}) {
		t.Errorf("the agent saw %v", got)
	}
}
