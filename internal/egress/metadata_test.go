package egress

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// everyPolicy is every combination of the options.
var everyPolicy = []policy{{}, {allowLoopback: true}, {allowPrivate: true}, {allowLoopback: true, allowPrivate: true}}

// spellings are the IPv6 spellings of the IPv4 address v4 that reach it:
// IPv4-mapped, NAT64 (RFC 6052's well-known prefix), 6to4, and a local
// NAT64 translator's (RFC 8215) at each prefix length it may use.
func spellings(v4 netip.Addr) []netip.Addr {
	b := v4.As4()
	at := func(prefix [16]byte, offsets ...int) netip.Addr {
		for i, o := range offsets {
			prefix[o] = b[i]
		}
		return netip.AddrFrom16(prefix)
	}
	wkp := netip.MustParseAddr("64:ff9b::").As16()
	local := netip.MustParseAddr("64:ff9b:1::").As16()
	return []netip.Addr{
		netip.AddrFrom16(v4.As16()),
		at(wkp, 12, 13, 14, 15),
		at(netip.MustParseAddr("2002::1").As16(), 2, 3, 4, 5),
		at(local, 6, 7, 9, 10),
		at(local, 7, 9, 10, 11),
		at(local, 9, 10, 11, 12),
		at(local, 12, 13, 14, 15),
	}
}

// TestMetadataRefusedUnderEveryOption runs over the whole metadata table:
// each address, and each spelling of an IPv4 one, is refused under every
// combination of the options, through the dialer's Control hook, with an
// error that names it; and each row says where the cloud documents it.
func TestMetadataRefusedUnderEveryOption(t *testing.T) {
	for _, m := range metadataAddresses {
		if !strings.HasPrefix(m.source, "https://") || m.what == "" {
			t.Errorf("%s: the row needs what it is and its source, has %q, %q", m.addr, m.what, m.source)
		}
		addrs := []netip.Addr{m.addr}
		if m.addr.Is4() {
			addrs = append(addrs, spellings(m.addr)...)
		} else {
			addrs = append(addrs, m.addr.WithZone("eth0"))
		}
		for _, a := range addrs {
			for _, p := range everyPolicy {
				err := p.control(context.Background(), "tcp", netip.AddrPortFrom(a, 80).String(), nil)
				if !errors.Is(err, Denied) || !strings.Contains(err.Error(), m.what) {
					t.Errorf("%+v: control(%s), %s: %v, want Denied naming %q", p, a, m.addr, err, m.what)
				}
			}
		}
	}
}

// TestMetadataTableHoldsBothFamilies: the clouds that serve metadata over
// IPv6 are in the table under both families, so that a row lost from it
// fails here.
func TestMetadataTableHoldsBothFamilies(t *testing.T) {
	held := map[netip.Addr]bool{}
	for _, m := range metadataAddresses {
		if held[m.addr] {
			t.Errorf("%s is in the table twice", m.addr)
		}
		held[m.addr] = true
	}
	for _, a := range []string{
		"169.254.169.254", "fd00:ec2::254", // AWS
		"169.254.170.23", "fd00:ec2::23", // AWS EKS Pod Identity
		"169.254.170.2",                     // AWS ECS
		"fd20:ce::254",                      // GCP
		"192.0.0.192", "fd00:c1::a9fe:a9fe", // OCI
		"169.254.42.42", "fd00:42::42", // Scaleway
		"168.63.129.16",   // Azure
		"100.100.100.200", // Alibaba Cloud
	} {
		if !held[netip.MustParseAddr(a)] {
			t.Errorf("%s is not in the metadata table", a)
		}
	}
}

// TestLocalNAT64ReachesNoMetadata: a local NAT64 address is private,
// unless one of its readings is a metadata or link-local address.
func TestLocalNAT64ReachesNoMetadata(t *testing.T) {
	for addr, want := range map[string]class{
		"64:ff9b:1::a01:203":         private, // 10.1.2.3 at /96
		"64:ff9b:1::808:808":         private, // 8.8.8.8 at /96
		"64:ff9b:1::a9fe:101":        never,   // 169.254.1.1 at /96
		"64:ff9b:1:0:a9:fea9:fe00:0": never,   // 169.254.169.254 at /64
		"64:ff9b:1:a9fe:a9:fe00::":   never,   // 169.254.169.254 at /48
		"64:ff9b:1:a9:fe:a9fe::":     never,   // 169.254.169.254 at /56
		"64:ff9b:1::6464:64c8":       never,   // 100.100.100.200 at /96
	} {
		if got, what := classify(netip.MustParseAddr(addr)); got != want {
			t.Errorf("classify(%s) = %d (%s), want %d", addr, got, what, want)
		}
	}
}

// allowedBy reports whether p lets a be dialled.
func allowedBy(p policy, a netip.Addr) bool { return p.allows(a) == nil }

// FuzzClassify: under every option, no IPv4-mapped, NAT64 or 6to4
// spelling of an IPv4 address is reached where the IPv4 address is not (a
// local NAT64 address is as private as its translator, whatever it
// reaches), a zone changes nothing, and a metadata or link-local address
// is reached through no spelling.
func FuzzClassify(f *testing.F) {
	for _, m := range metadataAddresses {
		b := m.addr.As16()
		f.Add(b[:])
	}
	f.Add([]byte{127, 0, 0, 1})
	f.Add(netip.MustParseAddr("64:ff9b:1::a9fe:a9fe").AsSlice())
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b [16]byte
		copy(b[:], raw)
		a := netip.AddrFrom16(b)
		v4 := netip.AddrFrom4([4]byte(b[:4]))
		for _, p := range everyPolicy {
			if allowedBy(p, a) != allowedBy(p, a.WithZone("z")) {
				t.Fatalf("%+v: %s and %s disagree", p, a, a.WithZone("z"))
			}
			for i, s := range spellings(v4) {
				if i < 3 && allowedBy(p, s) && !allowedBy(p, v4) {
					t.Fatalf("%+v: %s is reached, but not the %s it reaches", p, s, v4)
				}
				if metadata(v4) && allowedBy(p, s) {
					t.Fatalf("%+v: %s reaches the metadata address %s", p, s, v4)
				}
			}
		}
	})
}
