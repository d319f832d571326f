package events

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func proofEvent(t *testing.T, run bool) Event {
	t.Helper()
	p := NegotiationDecided{
		Protocol: "a2a", Outcome: "accepted", Version: "1.1", Requested: "1.2", Reason: ReasonOK, Floor: "1.1",
		PeerDigest: strings.Repeat("ab", 32), At: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
	}
	var e Event
	var err error
	if run {
		e, _ = NewRunEvent("acme/run-0123456789abcdef", p)
		e.NodeID, e.CausationID = "node", "cause"
		e.EngineVersion, e.HasEngineVersion = 2, true
		err = e.validateAndSeal()
	} else {
		e, err = NewHostEvent("ws", p)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !e.sealed() {
		t.Fatal("a new event carries no proof")
	}
	return e
}

// Changing any field of a proven event, of the envelope or the payload,
// drops the proof, Tenant aside. The fields are found by reflection, so
// that a field added later and left out of sealed fails here.
func TestProofCoversEveryField(t *testing.T) {
	for _, run := range []bool{true, false} {
		base := proofEvent(t, run)
		e := base
		var walk func(v reflect.Value, path string)
		walk = func(v reflect.Value, path string) {
			for i := range v.NumField() {
				f, sf := v.Field(i), v.Type().Field(i)
				if !sf.IsExported() {
					continue
				}
				name := path + sf.Name
				if name == "Tenant" {
					continue // routing only: Validate does not read it, so the proof need not cover it
				}
				if sf.Type == reflect.TypeFor[NegotiationDecided]() {
					walk(f, name+".")
					continue
				}
				old := reflect.ValueOf(f.Interface())
				switch f.Kind() {
				case reflect.String:
					f.SetString(f.String() + "x")
				case reflect.Int, reflect.Int64:
					f.SetInt(f.Int() + 1)
				case reflect.Bool:
					f.SetBool(!f.Bool())
				case reflect.Struct: // time.Time
					f.Set(reflect.ValueOf(f.Interface().(time.Time).Add(time.Second)))
				default:
					t.Fatalf("%s: a %s field; teach this test to change it", name, f.Kind())
				}
				if e.sealed() {
					t.Errorf("run %t: changing %s keeps the proof", run, name)
				}
				f.Set(old)
				if !e.sealed() {
					t.Errorf("run %t: restoring %s does not restore the proof", run, name)
				}
			}
		}
		walk(reflect.ValueOf(&e).Elem(), "")
		if !e.sealed() {
			t.Errorf("run %t: the walk left the event changed", run)
		}
	}
}

// The proof vouches for the strings it holds: an equal string held
// elsewhere drops it, and the event is validated in full instead, which it
// passes; an invalid one is refused.
func TestProofFallsBackToValidate(t *testing.T) {
	e := proofEvent(t, true)
	e.ID = strings.Clone(e.ID)
	if e.sealed() {
		t.Error("a copied id kept the proof")
	}
	if err := e.check(); err != nil {
		t.Errorf("check() = %v for a valid event without its proof", err)
	}
	e.ID = "short"
	if err := e.check(); err == nil {
		t.Error("check() passed an invalid id")
	}
	var zero Event
	if zero.sealed() || zero.check() == nil {
		t.Error("the zero Event passed")
	}
	// An invalid event comes back from its constructor without proof.
	bad, err := NewHostEvent("\xff", proofEvent(t, false).Payload)
	if err == nil || bad.sealed() || bad.proof != nil {
		t.Errorf("an invalid event: %v, proof %v", err, bad.proof)
	}
}
