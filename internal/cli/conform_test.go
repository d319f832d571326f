package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestConformUsage(t *testing.T) {
	for _, args := range [][]string{{"conform"}, {"conform", "a", "b"}, {"conform", "--nope", "http://x"}, {"conform", "ftp://x"},
		{"conform", "--now", "2026-13-01", "http://127.0.0.1:9"}} {
		var out, errb bytes.Buffer
		if code := Main(args, strings.NewReader(""), &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// TestConformUnreachable: a host that is not there is reported, every row
// blocked (or inapplicable), and that is no failure of the host.
func TestConformUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ln.Close()
	var out, errb bytes.Buffer
	if code := Main([]string{"conform", "--json", "--token", "t", base}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Base    string         `json:"base"`
		Counts  map[string]int `json:"counts"`
		Results []map[string]any
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Counts["pass"] != 0 || doc.Counts["blocked"] != len(doc.Results)-1 || doc.Counts["inapplicable"] != 1 {
		t.Fatalf("%s", out.String())
	}
	out.Reset()
	if code := Main([]string{"conform", base}, strings.NewReader(""), &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "SCENARIO") {
		t.Fatalf("exit %d: %s", code, out.String())
	}
}

// TestConformFails: a failed row exits 1.
func TestConformFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"protocolVersions":["2.0"],"preferredVersion":"2.0","supportedTransports":["grpc"]}`))
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := Main([]string{"conform", srv.URL}, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(out.String(), "supportedTransports") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
}

// TestConformNow: --now is the clock the refresh SLA is judged by, so a
// run does not depend on the day it is run.
func TestConformNow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"protocolVersions":["2.0"],"preferredVersion":"2.0","a2a":{"status":"stable","since":"2.0",` +
			`"witness":"seam-gated","versions":["1.0"],"preferredVersion":"1.0","minimumVersion":"1.0","refreshedAt":"2026-11-01"}}`))
	}))
	defer srv.Close()
	for now, want := range map[string]string{
		"2027-01-30": "pass", "2027-01-30T00:00:01Z": "fail", "2026-10-31": "pass", "2026-10-30T23:59:59Z": "fail",
	} {
		var out, errb bytes.Buffer
		Main([]string{"conform", "--json", "--now", now, srv.URL}, strings.NewReader(""), &out, &errb)
		var doc struct {
			Results []struct{ Requirement, Verdict, Why string }
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("--now %s: %v\n%s%s", now, err, out.String(), errb.String())
		}
		got := ""
		for _, r := range doc.Results {
			if r.Requirement == "openwop.requirement.0175.refresh-sla" {
				got = r.Verdict
			}
		}
		if got != want {
			t.Errorf("--now %s: refresh-sla %q, want %s:\n%s", now, got, want, out.String())
		}
	}
}
