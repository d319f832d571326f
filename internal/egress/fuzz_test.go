package egress

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/wopneg/wopneg/events"
)

// FuzzDialAuthority: whatever the host's spelling, the authority dialled
// names the origin the digest names, is already canonical, and is never a
// spelling that Go's resolver reads as another address.
func FuzzDialAuthority(f *testing.F) {
	for _, s := range []string{
		"0x7f000001", "0177.0.0.1", "127.1", "2130706433", "0x7f.1", "127.0.0.1.", "[::ffff:7f00:1]",
		"[0:0:0:0:0:ffff:127.0.0.1]", "peer.example:8080", "PEER.example:80", "b\u00fccher.example",
		"xn--bcher-kva.example", "1.2.3.4.5", "0", "0x", "4294967295", "4294967296", "[::1]:443",
		"[fe80::1%25eth0]", "a..b", "09.1", "1.2.3.08", "user@peer", "peer:0080", "\u0661.com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		u, err := url.Parse("http://" + host + "/")
		if err != nil {
			return // Go sends nothing for a URL it cannot parse
		}
		got, err := dialAuthority(u)
		if u.Host == "" {
			// Go reads no host where the URL Standard may read one
			// ("http:///0/" is http://0.0.0.0 to it): refused, so
			// that neither reading is sent.
			if err == nil {
				t.Fatalf("%q: Go reads no host, and dialAuthority gave %q", host, got)
			}
			return
		}
		want, oerr := events.Origin(u.String())
		if (err == nil) != (oerr == nil) {
			t.Fatalf("%q: dialAuthority error %v, Origin error %v", host, err, oerr)
		}
		if err != nil {
			return
		}
		if "http://"+got != want {
			t.Fatalf("%q: dials %q, the digest names %q", host, got, want)
		}
		if again, err := events.Origin("http://" + got); err != nil || again != want {
			t.Fatalf("%q: the dialled %q is not canonical: %q, %v", host, got, again, err)
		}
		name, _, err := net.SplitHostPort(got)
		if err != nil {
			name = got
		}
		name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
		if ip := net.ParseIP(name); ip != nil {
			a, err := netip.ParseAddr(name)
			if err != nil || a.String() != name && !a.Is4In6() {
				t.Fatalf("%q: dials %q, which Go reads as %v", host, got, ip)
			}
		} else if last := name[strings.LastIndexByte(name, '.')+1:]; last != "" && strings.Trim(last, "0123456789") == "" {
			t.Fatalf("%q: dials the name %q, which ends in a number", host, got)
		}
	})
}
