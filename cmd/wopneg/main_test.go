package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

const wideFacet = `{"a2a": {"versions": ["1.0","1.1","1.2"], "preferredVersion": "1.2",
	"minimumVersion": "1.1", "refreshedAt": "2026-11-01"}}`

func TestDecide(t *testing.T) {
	tests := []struct {
		name, request string
		want          map[string]any // top-level answer fields, compared as JSON values
		wantEvent     map[string]any
		absent        []string
	}{{
		name: "authenticated downgrade",
		request: `{"subject": {"issuer":"https://idp.example","subjectId":"u-1","tenant":"acme","lane":"oidc","kind":"user"},
			"facet": ` + wideFacet + `, "offer": {"peer": "https://peer.example", "peerVersions": ["1.1"]},
			"policy": {}, "now": "2026-11-29T12:00:00Z"}`,
		want: map[string]any{"outcome": "downgraded", "version": "1.1", "reason": "ok", "rule": "accept"},
		wantEvent: map[string]any{"protocol": "a2a", "outcome": "accepted", "version": "1.1", "reason": "ok", "floor": "1.1",
			"peerDigest": "3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1", "at": "2026-11-29T12:00:00Z"},
		absent: []string{"status", "error"},
	}, {
		name: "unauthenticated downgrade refused",
		request: `{"subject": null, "facet": ` + wideFacet + `,
			"offer": {"peer": "https://peer.example", "requested": "1.1", "peerVersions": ["1.1"]},
			"policy": {"denyDowngrade": false}, "now": "2026-11-29T12:00:00Z"}`,
		want:      map[string]any{"outcome": "refused", "reason": "unauthenticated", "rule": "authenticated", "status": 400.0},
		wantEvent: map[string]any{"outcome": "refused", "requested": "1.1", "reason": "unauthenticated"},
		absent:    []string{"version"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.request, "decide")
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			for k, want := range tt.want {
				if got[k] != want {
					t.Errorf("%s = %#v, want %#v", k, got[k], want)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present, want absent", k)
				}
			}
			event, _ := got["event"].(map[string]any)
			for k, want := range tt.wantEvent {
				if event[k] != want {
					t.Errorf("event.%s = %#v, want %#v", k, event[k], want)
				}
			}
			if got["outcome"] == "refused" {
				envelope, _ := got["error"].(map[string]any)
				if envelope["error"] != "interop_version_unsupported" || envelope["message"] == "" {
					t.Errorf("error = %#v, want an interop_version_unsupported envelope", got["error"])
				}
			}
		})
	}
}

func TestDecideMalformed(t *testing.T) {
	valid := `"facet": ` + wideFacet + `, "offer": {"peerVersions": ["1.1"]}, "now": "2026-11-29T12:00:00Z"`
	tests := []struct{ name, request, mention string }{
		{"not JSON", `{"subject": `, "request"},
		{"unknown key", `{"subjet": null, ` + valid + `}`, "subjet"},
		{"invalid facet", `{"subject": null, "facet": {"a2a": {"versions": ["1.0"], "preferredVersion": "1.2",
			"minimumVersion": "1.0", "refreshedAt": "2026-11-01"}}, "offer": {"peerVersions": ["1.0"]}, "now": "2026-11-29T12:00:00Z"}`, "preferredVersion"},
		{"invalid subject", `{"subject": {"issuer":"x","subjectId":"u","tenant":"a b","lane":"oidc","kind":"user"}, ` + valid + `}`, "tenant"},
		{"no clock", `{"subject": null, "facet": ` + wideFacet + `, "offer": {"peerVersions": ["1.1"]}}`, "now"},
		{"unadvertised protocol", `{"subject": null, "facet": ` + wideFacet + `, "offer": {"protocol": "mcp", "peerVersions": []}, "now": "2026-11-29T12:00:00Z"}`, "mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.request, "decide")
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "wopneg: ") || !strings.Contains(stderr, tt.mention) {
				t.Errorf("stderr = %q, want one line naming %q", stderr, tt.mention)
			}
		})
	}
}

func TestVectorsCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "vectors")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	m := regexp.MustCompile(`(?m)^(\d+) passed, 0 failed\n\z`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("last line is not \"N passed, 0 failed\":\n%s", stdout)
	}
	if n, _ := strconv.Atoi(m[1]); n < 80 {
		t.Errorf("%d vectors passed, want at least 80", n)
	}
}

func TestDemo(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "demo")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"a2a offers 1.0 1.1 1.2, preferred 1.2, floor 1.1",
		"mcp offers 2025-06-18 2025-11-25 2026-07-28, preferred 2026-07-28, floor 2025-11-25",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	rows := regexp.MustCompile(`(?m)^(a2a|mcp)\s+(authenticated|anonymous)\s+\S+\s+\S+\s+(yes|no)\s+(accepted|downgraded|refused)\s`).FindAllStringSubmatch(stdout, -1)
	if len(rows) != 14 {
		t.Fatalf("demo printed %d decision rows, want 14:\n%s", len(rows), stdout)
	}
	kinds := map[string]int{}
	for _, r := range rows {
		kinds[r[4]]++
	}
	if kinds["accepted"] == 0 || kinds["downgraded"] == 0 || kinds["refused"] == 0 {
		t.Errorf("demo shows %v; want every kind of outcome", kinds)
	}
}

func TestUsage(t *testing.T) {
	if code, _, stderr := runCLI(t, "", "frobnicate"); code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCLI(t, ""); code != 2 {
		t.Errorf("no command: exit %d, want 2", code)
	}
	if code, stdout, _ := runCLI(t, "", "help"); code != 0 || !strings.Contains(stdout, "wopneg decide") {
		t.Errorf("help: exit %d, stdout %q", code, stdout)
	}
}
