package a2aversion_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/a2aversion"
	"github.com/wopneg/wopneg/negotiate"
)

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want a2aversion.Requested
		call a2aversion.Requested
	}{
		{"none", nil, a2aversion.Requested{}, a2aversion.Requested{Version: "0.3", Implied: true}},
		{"one empty", []string{" \t"}, a2aversion.Requested{}, a2aversion.Requested{Version: "0.3", Implied: true}},
		{"one", []string{" 1.0\t"}, a2aversion.Requested{Version: "1.0"}, a2aversion.Requested{Version: "1.0"}},
		{"malformed", []string{"1.0.1"}, a2aversion.Requested{Values: []string{"1.0.1"}, Problem: a2aversion.Malformed}, a2aversion.Requested{Values: []string{"1.0.1"}, Problem: a2aversion.Malformed}},
		{"two equal", []string{"1.0", "1.0"}, a2aversion.Requested{Values: []string{"1.0", "1.0"}, Count: 2, Problem: a2aversion.Multiple}, a2aversion.Requested{Values: []string{"1.0", "1.0"}, Count: 2, Problem: a2aversion.Multiple}},
		{"a list opening with a comma", []string{",1.0"}, a2aversion.Requested{Values: []string{"", "1.0"}, Count: 2, Problem: a2aversion.Multiple}, a2aversion.Requested{Values: []string{"", "1.0"}, Count: 2, Problem: a2aversion.Multiple}},
		{"a list", []string{"1.0, 0.3"}, a2aversion.Requested{Values: []string{"1.0", "0.3"}, Count: 2, Problem: a2aversion.Multiple}, a2aversion.Requested{Values: []string{"1.0", "0.3"}, Count: 2, Problem: a2aversion.Multiple}},
		{"many kept four", []string{"a,b,c", "d,e,f"}, a2aversion.Requested{Values: []string{"a", "b", "c", "d"}, Count: 6, Problem: a2aversion.Multiple}, a2aversion.Requested{Values: []string{"a", "b", "c", "d"}, Count: 6, Problem: a2aversion.Multiple}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := a2aversion.Read(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Read = %+v, want %+v", got, tc.want)
			}
			if call := got.Call(); !reflect.DeepEqual(call, tc.call) {
				t.Errorf("Call = %+v, want %+v", call, tc.call)
			}
		})
	}
}

func TestRaw(t *testing.T) {
	one := a2aversion.Read([]string{"1.0"})
	many := a2aversion.Read([]string{"1.0", "x"})
	if one.Raw() != "1.0" || many.Raw() != "1.0, x" {
		t.Errorf("Raw = %q, %q", one.Raw(), many.Raw())
	}
}

func TestMessage(t *testing.T) {
	adv := facets.Advertised{Preferred: "1.0", Floor: "0.3"}
	served := []string{"1.0", "0.3"}
	long := strings.Repeat("9", 40)
	for _, tc := range []struct {
		name string
		in   []string
		o    negotiate.Outcome
		want string
	}{
		{"several", []string{"1.0", "0.3"}, negotiate.Outcome{}, `A2A-Version carries 2 values ("1.0", "0.3"), not one; send exactly one version; this interface serves 1.0, 0.3`},
		{"several, some not kept", []string{"1,2,3,4,5"}, negotiate.Outcome{}, `A2A-Version carries 5 values ("1", "2", "3", "4", ...), not one; send exactly one version; this interface serves 1.0, 0.3`},
		{"malformed, cut", []string{long}, negotiate.Outcome{}, `A2A-Version "` + long[:32] + `"... is not a version: want major.minor, such as "1.0"; this interface serves 1.0, 0.3`},
		{"below floor", []string{"0.2"}, negotiate.Outcome{Reason: events.ReasonBelowFloor}, `A2A-Version "0.2" is below this interface's minimum version 0.3; this interface serves 1.0, 0.3`},
		{"unauthenticated, implied", nil, negotiate.Outcome{Reason: events.ReasonUnauthenticated}, `A2A-Version (none, which A2A reads as 0.3) is below the preferred version 1.0 and is served only to an authenticated caller; this interface serves 1.0, 0.3`},
		{"policy", []string{"0.3"}, negotiate.Outcome{Rule: negotiate.RulePolicy}, `A2A-Version "0.3" is not served to this caller by the host's policy; this interface serves 1.0, 0.3`},
		{"other", []string{"2.0"}, negotiate.Outcome{}, `A2A-Version "2.0" is not served; this interface serves 1.0, 0.3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a2aversion.Read(tc.in).Call()
			if got := a2aversion.Message(&r, adv, &tc.o, served); got != tc.want {
				t.Errorf("Message =\n %s\nwant\n %s", got, tc.want)
			}
		})
	}
}

// TestQuoteBound pins the quote at its bound: 32 bytes are echoed whole,
// 33 are cut.
func TestQuoteBound(t *testing.T) {
	at, over := strings.Repeat("a", 32), strings.Repeat("a", 33)
	if got := a2aversion.Quote(at); got != `"`+at+`"` {
		t.Errorf("Quote of 32 bytes: %s", got)
	}
	if got := a2aversion.Quote(over); got != `"`+at+`"...` {
		t.Errorf("Quote of 33 bytes: %s", got)
	}
	if got := a2aversion.QuoteList([]string{"a", "b", "c", "d", "e"}); got != `"a", "b", "c", "d", ...` {
		t.Errorf("QuoteList = %s", got)
	}
}

// TestListed: a refusal's supportedVersions, as either binding reads it.
func TestListed(t *testing.T) {
	for in, want := range map[string][]string{
		"":              nil,
		" , \t,":        nil,
		"1.0":           {"1.0"},
		" 0.3 ,\t1.0 ":  {"0.3", "1.0"},
		"0.3,,1.0,":     {"0.3", "1.0"},
		"not, versions": {"not", "versions"},
	} {
		if got := a2aversion.Listed(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Listed(%q) = %q, want %q", in, got, want)
		}
	}
}
