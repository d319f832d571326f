package facets

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPublishedReleases(t *testing.T) {
	r := PublishedReleases()
	if err := r.Validate(); err != nil {
		t.Fatalf("embedded list: %v", err)
	}
	superseded := map[Protocol]map[string]bool{
		ProtocolA2A: {"0.2": true, "0.3": true, "1.0": false},
		ProtocolMCP: {"2024-11-05": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": false, "2026-07-28": false},
	}
	for p, want := range superseded {
		if n := len(r.List(p)); n != len(want) {
			t.Errorf("%s lists %d releases, want %d", p, n, len(want))
		}
		for v, sup := range want {
			rel, ok := r.Lookup(p, v)
			if !ok {
				t.Errorf("%s %s is not listed", p, v)
				continue
			}
			if rel.Superseded() != sup {
				t.Errorf("%s %s superseded = %v, want %v", p, v, rel.Superseded(), sup)
			}
			if !validDate(rel.Published) {
				t.Errorf("%s %s published %q", p, v, rel.Published)
			}
			if p == ProtocolMCP && rel.Published != v {
				t.Errorf("mcp %s published %s, want the revision's own date", v, rel.Published)
			}
		}
	}
	// A fresh copy on every call: changing one leaves the next intact.
	r.A2A[0].Version = "9.9"
	if again := PublishedReleases(); again.A2A[0].Version != "0.2" {
		t.Errorf("PublishedReleases shares memory between calls: %q", again.A2A[0].Version)
	}
}

func TestReleasesLookup(t *testing.T) {
	r := Releases{A2A: []Release{{Version: "1.0", Published: "2026-03-12"}}}
	if _, ok := r.Lookup(ProtocolMCP, "1.0"); ok {
		t.Error("an A2A version was found under mcp")
	}
	if _, ok := r.Lookup("grpc", "1.0"); ok || r.List("grpc") != nil {
		t.Error("an unknown protocol lists releases")
	}
	if rel, ok := r.Lookup(ProtocolA2A, "1.0"); !ok || rel.Published != "2026-03-12" {
		t.Errorf("Lookup a2a 1.0 = %+v, %v", rel, ok)
	}
}

func TestParseReleases(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string // "path rule", sorted
	}{
		{"valid", `{"a2a": [{"version": "1.0", "published": "2026-03-12"}], "mcp": []}`, nil},
		{"empty object", `{}`, nil},
		{"not JSON", `{"a2a": [`, []string{" syntax"}},
		{"not an object", `[]`, []string{" type"}},
		{"unknown key", `{"grpc": []}`, []string{"grpc unknown-field"}},
		{"repeated key", `{"a2a": [], "a2a": []}`, []string{"a2a duplicate-key"}},
		{"list not an array", `{"mcp": {}}`, []string{"mcp type"}},
		{"release not an object", `{"a2a": ["1.0"]}`, []string{"a2a[0] type"}},
		{"unknown release field", `{"a2a": [{"version": "1.0", "published": "2026-03-12", "date": "x"}]}`,
			[]string{"a2a[0].date unknown-field"}},
		{"missing fields", `{"a2a": [{}]}`, []string{"a2a[0].published required", "a2a[0].version required"}},
		{"empty strings", `{"a2a": [{"version": "", "published": ""}]}`,
			[]string{"a2a[0].published date", "a2a[0].version pattern"}},
		{"wrong types", `{"a2a": [{"version": 1.0, "published": null}]}`,
			[]string{"a2a[0].published type", "a2a[0].version type"}},
		{"bad version and date", `{"a2a": [{"version": "v1", "published": "2026-02-30"}], "mcp": [{"version": "2026-7-28", "published": "2026-07-28"}]}`,
			[]string{"a2a[0].published date", "a2a[0].version pattern", "mcp[0].version date"}},
		{"duplicate", `{"a2a": [{"version": "1.0", "published": "2026-03-12"}, {"version": "1.0", "published": "2026-03-13"}]}`,
			[]string{"a2a[1].version duplicate"}},
		{"superseded by an unlisted version", `{"a2a": [{"version": "1.0", "published": "2026-03-12", "supersededBy": "2.0"}]}`,
			[]string{"a2a[0].supersededBy member"}},
		{"superseded by an older version", `{"a2a": [{"version": "0.3", "published": "2025-07-30"}, {"version": "1.0", "published": "2026-03-12", "supersededBy": "0.3"}]}`,
			[]string{"a2a[1].supersededBy supersede-order"}},
		{"superseded by a malformed version", `{"mcp": [{"version": "2025-06-18", "published": "2025-06-18", "supersededBy": "soon"}]}`,
			[]string{"mcp[0].supersededBy date"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseReleases([]byte(tt.doc))
			got := sortedPairs(pairsOf(violationsOf(t, err)))
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("violations %v, want %v", got, tt.want)
			}
			if err != nil && !reflect.DeepEqual(r, Releases{}) {
				t.Errorf("on error ParseReleases returned %+v", r)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
		})
	}
}

func TestStaticUpstreamCopies(t *testing.T) {
	src := Releases{A2A: []Release{{Version: "1.0", Published: "2026-03-12"}}}
	up := StaticUpstream(src)
	got, err := up.Releases(context.Background())
	if err != nil || !reflect.DeepEqual(got, src) {
		t.Fatalf("Releases = %+v, %v", got, err)
	}
	got.A2A[0].Version = "0.3"
	if src.A2A[0].Version != "1.0" {
		t.Error("StaticUpstream handed out its own memory")
	}
}

const mirror = `{"a2a": [{"version": "1.0", "published": "2026-03-12"}],
	"mcp": [{"version": "2026-07-28", "published": "2026-07-28"}]}`

func TestFileUpstream(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "releases.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(mirror), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"a2a": [{"version": "one"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := FileUpstream{good}.Releases(ctx)
	if err != nil || len(r.A2A) != 1 || len(r.MCP) != 1 {
		t.Fatalf("good file: %+v, %v", r, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tt := range []struct {
		name    string
		ctx     context.Context
		path    string
		is      error
		mention string
	}{
		{"missing file", ctx, filepath.Join(dir, "nope.json"), fs.ErrNotExist, "nope.json"},
		{"invalid list", ctx, bad, ErrInvalid, `a2a[0].version: "one" is not a version`},
		{"no path", ctx, "", nil, "Path is empty"},
		{"cancelled", cancelled, good, context.Canceled, "releases.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FileUpstream{tt.path}.Releases(tt.ctx)
			var ue *UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v (%T) is not an *UpstreamError", err, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not match %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

func TestHTTPUpstream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Accept") != "application/json" {
			http.Error(w, "want GET with Accept: application/json", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/releases.json":
			w.Write([]byte(mirror))
		case "/invalid.json":
			w.Write([]byte(`{"mcp": [{"version": "2026-07-28"}]}`))
		case "/huge.json":
			w.Write([]byte(`{"a2a": [`))
			w.Write([]byte(strings.Repeat(" ", maxReleases)))
			w.Write([]byte(`]}`))
		case "/hang.json":
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	r, err := HTTPUpstream{URL: srv.URL + "/releases.json", Client: srv.Client()}.Releases(ctx)
	if err != nil || len(r.A2A) != 1 || r.MCP[0].Version != "2026-07-28" {
		t.Fatalf("good list: %+v, %v", r, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tt := range []struct {
		name, path string
		ctx        context.Context
		is         error
		mention    string
	}{
		{"not found", "/missing.json", ctx, nil, "404"},
		{"invalid list", "/invalid.json", ctx, ErrInvalid, "mcp[0].published: published is required"},
		{"too large", "/huge.json", ctx, nil, "larger than 1 MiB"},
		{"cancelled", "/hang.json", cancelled, context.Canceled, "/hang.json"},
		{"secrets redacted", "/missing.json?token=s3cret", ctx, nil, "/missing.json:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := HTTPUpstream{URL: srv.URL + tt.path, Client: srv.Client()}.Releases(tt.ctx)
			var ue *UpstreamError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v (%T) is not an *UpstreamError", err, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not match %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the query", err)
			}
		})
	}
	if _, err := (HTTPUpstream{URL: "::"}).Releases(ctx); err == nil {
		t.Error("a malformed URL gave no error")
	}
}

// FuzzParseReleases checks that ParseReleases never panics, that what it
// accepts is valid and survives a JSON round trip, and that what it
// refuses comes with located violations.
func FuzzParseReleases(f *testing.F) {
	f.Add(published)
	f.Add([]byte(mirror))
	f.Add([]byte(`{"a2a": [{"version": "1.0", "published": "2026-03-12", "supersededBy": "0.3"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseReleases(data)
		if err != nil {
			for _, v := range violationsOf(t, err) {
				if v.Rule == "" || v.Message == "" {
					t.Fatalf("violation %+v lacks a rule or message", v)
				}
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted list is invalid: %v", err)
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseReleases(out)
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip of %s: %+v, %v", out, again, err)
		}
	})
}
