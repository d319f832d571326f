package a2agrpc_test

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/wopneg/wopneg/a2agrpc"
	"github.com/wopneg/wopneg/internal/a2aversion"
)

// TestReadVersion: every value of a2a-version counts, and so does the key
// in another case (sorted, so that nothing depends on map order); the
// values are read by A2A's rule for every binding.
func TestReadVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		md   metadata.MD
		want a2aversion.Requested
	}{
		{"none", nil, a2aversion.Requested{}},
		{"one", metadata.Pairs("a2a-version", "1.0"), a2aversion.Requested{Version: "1.0"}},
		{"other keys only", metadata.Pairs("a2a-versions", "1.0", "x-a2a-version", "0.3"), a2aversion.Requested{}},
		{"another case", metadata.MD{"A2A-Version": {"1.0"}}, a2aversion.Requested{Version: "1.0"}},
		{"both cases, sorted", metadata.MD{"a2a-version": {"1.0"}, "a2a-VERSION": {"3"}, "A2A-VERSION": {"2"}}, a2aversion.Requested{Values: []string{"1.0", "2", "3"}, Count: 3, Problem: a2aversion.Multiple}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := a2agrpc.ReadVersion(tc.md); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readVersion = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestReadVersionLeavesTheMetadataAlone: reading another case's values
// does not write into the call's own.
func TestReadVersionLeavesTheMetadataAlone(t *testing.T) {
	own := make([]string, 1, 4)
	own[0] = "1.0"
	md := metadata.MD{"a2a-version": own, "A2A-Version": {"0.3"}}
	a2agrpc.ReadVersion(md)
	if got := own[:2]; got[1] != "" {
		t.Errorf("the call's values were written to: %v", got)
	}
}

// FuzzReadVersion: whatever the metadata, the read is A2A's rule over
// every value of the key in any case, at most four kept, and the same
// however often it is read.
func FuzzReadVersion(f *testing.F) {
	for _, s := range [][3]string{{"1.0", "", ""}, {"1.0,0.3", "", ""}, {"", "1.0", ""}, {"1.0", "1.0", "x"}, {" 1.0 ", "", ""}, {",,,,,,", "", ""}, {"v1", "", ""}, {"1.0.1", "", "\t"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, own, other, third string) {
		md := metadata.MD{}
		if own != "" {
			md["a2a-version"] = []string{own}
		}
		if other != "" {
			md["A2A-Version"] = []string{other}
		}
		if third != "" {
			md["a2a-VERSION"] = append(md["a2a-VERSION"], third, third)
		}
		got := a2agrpc.ReadVersion(md)
		var all []string
		for _, k := range []string{"a2a-version", "A2A-Version", "a2a-VERSION"} {
			all = append(all, md[k]...)
		}
		if want := a2aversion.Read(all); !reflect.DeepEqual(got, want) {
			t.Fatalf("readVersion = %+v, the rule reads %+v", got, want)
		}
		if again := a2agrpc.ReadVersion(md); !reflect.DeepEqual(again, got) {
			t.Fatalf("read again: %+v, then %+v", got, again)
		}
		if len(got.Values) > a2aversion.MaxListed {
			t.Fatalf("%d values kept", len(got.Values))
		}
		if got.Problem == a2aversion.Multiple {
			commas := 0
			for _, v := range all {
				commas += strings.Count(v, ",") + 1
			}
			if got.Count != commas {
				t.Fatalf("count %d, want %d", got.Count, commas)
			}
		}
	})
}
