package events

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzOrigin checks the properties a digest key needs for any input: no
// panic, *FieldErrors for the peer, and an origin that is ASCII, has
// nothing after its authority, is its own origin, and is what PeerDigest
// hashes.
func FuzzOrigin(f *testing.F) {
	for _, tc := range loadOriginCases(f) {
		f.Add(tc.URL)
	}
	f.Fuzz(func(t *testing.T, rawURL string) {
		origin, err := Origin(rawURL)
		if err != nil {
			if _, _, ok := originProblem(err); !ok {
				t.Fatalf("Origin(%q) error %v is not a *FieldError for the peer", rawURL, err)
			}
			if origin != "" {
				t.Fatalf("Origin(%q) = %q alongside error %v", rawURL, origin, err)
			}
			if d, err := PeerDigest(rawURL); err == nil || d != "" {
				t.Fatalf("PeerDigest(%q) = %q, %v; Origin failed", rawURL, d, err)
			}
			return
		}
		scheme, rest, ok := strings.Cut(origin, "://")
		if !ok || !slices.Contains([]string{"http", "https", "ws", "wss"}, scheme) {
			t.Fatalf("Origin(%q) = %q: not a special scheme followed by ://", rawURL, origin)
		}
		if rest == "" || strings.ContainsAny(rest, "/?#@\\") {
			t.Fatalf("Origin(%q) = %q: empty host or path, query, fragment or userinfo left", rawURL, origin)
		}
		for i := 0; i < len(origin); i++ {
			if origin[i] <= ' ' || origin[i] >= utf8.RuneSelf {
				t.Fatalf("Origin(%q) = %q: byte %#x is not printable ASCII", rawURL, origin, origin[i])
			}
		}
		again, err := Origin(origin)
		if err != nil || again != origin {
			t.Fatalf("Origin(%q) = %q, but Origin(%q) = %q, %v", rawURL, origin, origin, again, err)
		}
		digest, err := PeerDigest(rawURL)
		if err != nil || digest != originTestDigest(origin) {
			t.Fatalf("PeerDigest(%q) = %q, %v; want sha256 of %q", rawURL, digest, err, origin)
		}
	})
}
