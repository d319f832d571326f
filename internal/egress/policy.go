package egress

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"syscall"
)

// class is what the address policy makes of an address.
type class uint8

const (
	public   class = iota // reached
	loopback              // reached with Options.AllowLoopback
	private               // reached with Options.AllowPrivate
	never                 // never reached
)

// rule classes the addresses of one prefix; what names them in an error.
type rule struct {
	prefix netip.Prefix
	class  class
	what   string
}

// rules is the address policy, most specific first: the first rule whose
// prefix holds an address classes it, so a metadata address inside a
// private range is never reached even where private ones are.
var rules = append(metadataRules(), rangeRules...)

// rangeRules class the ranges, after the metadata addresses.
var rangeRules = []rule{
	{netip.MustParsePrefix("0.0.0.0/8"), never, `in "this network" (0.0.0.0/8)`},
	{netip.MustParsePrefix("127.0.0.0/8"), loopback, "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), never, "a link-local address (where cloud metadata lives)"},
	{netip.MustParsePrefix("192.0.0.0/24"), never, "an IETF protocol assignment (192.0.0.0/24)"},
	{netip.MustParsePrefix("224.0.0.0/4"), never, "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), never, "reserved or broadcast (240.0.0.0/4)"},
	{netip.MustParsePrefix("10.0.0.0/8"), private, "a private address"},
	{netip.MustParsePrefix("172.16.0.0/12"), private, "a private address"},
	{netip.MustParsePrefix("192.168.0.0/16"), private, "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), private, "a shared address (carrier-grade NAT, 100.64.0.0/10)"},
	{netip.MustParsePrefix("198.18.0.0/15"), private, "a benchmarking address (198.18.0.0/15)"},
	{netip.MustParsePrefix("::1/128"), loopback, "a loopback address"},
	{netip.MustParsePrefix("::/96"), never, "unspecified or IPv4-compatible (::/96)"},
	{netip.MustParsePrefix("fe80::/10"), never, "a link-local address"},
	{netip.MustParsePrefix("ff00::/8"), never, "a multicast address"},
	{netip.MustParsePrefix("fc00::/7"), private, "a unique local (private) address"},
	{netip.MustParsePrefix("fec0::/10"), private, "a site-local (private) address"},
	{localNAT64, private, "a local NAT64 address (64:ff9b:1::/48)"},
}

// Prefixes of IPv6 addresses that reach the IPv4 address they embed at
// the byte offset given, through a translator or a relay.
var (
	nat64 = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052: the last 4 bytes
	sixTo = netip.MustParsePrefix("2002::/16")    // RFC 3056: bytes 2 to 5
)

// localNAT64 is the prefix of local NAT64 translators (RFC 8215), inside
// which a translator's own prefix may be any RFC 6052 length from /48 to
// /96, each placing the IPv4 address it reaches elsewhere.
var localNAT64 = netip.MustParsePrefix("64:ff9b:1::/48")

// classify returns the class of a and what kind of address it is. The
// zone is ignored, an IPv4-mapped address is its IPv4 address, and a
// NAT64 or 6to4 address is no better than the IPv4 address it reaches.
func classify(a netip.Addr) (class, string) {
	a = a.WithZone("").Unmap()
	if !a.IsValid() {
		return never, "not an IP address"
	}
	if v4, ok := embedded(a); ok {
		if c, what := classify(v4); c != public {
			return c, what + ", through " + v4.String()
		}
	}
	if localNAT64.Contains(a) {
		for _, v4 := range localEmbeddings(a) {
			if metadata(v4) {
				_, what := classify(v4)
				return never, what + ", through " + v4.String() + " (local NAT64)"
			}
		}
	}
	for _, r := range rules {
		if r.prefix.Contains(a) {
			return r.class, r.what
		}
	}
	return public, "a public address"
}

// embedded returns the IPv4 address a NAT64 or 6to4 address reaches.
func embedded(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixTo.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// localEmbeddings are the IPv4 addresses a local NAT64 address a may
// reach, one for each RFC 6052 prefix length a translator inside
// localNAT64 may use: /48, /56, /64 and /96 (bits 64 to 71 are never
// part of the IPv4 address).
func localEmbeddings(a netip.Addr) [4]netip.Addr {
	b := a.As16()
	return [4]netip.Addr{
		netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]}),
		netip.AddrFrom4([4]byte{b[7], b[9], b[10], b[11]}),
		netip.AddrFrom4([4]byte(b[9:13])),
		netip.AddrFrom4([4]byte(b[12:16])),
	}
}

// linkLocal4 is where IPv4 cloud metadata lives.
var linkLocal4 = netip.MustParsePrefix("169.254.0.0/16")

// metadata reports whether the IPv4 address v4 is a metadata address or
// link-local: a local NAT64 address reaching one is refused, whereas one
// reaching any other address is as private as the translator. (Only
// those: a local NAT64 address read at the wrong length reads as some
// other IPv4 address, 0.0.0.0 often, which says nothing of it.)
func metadata(v4 netip.Addr) bool {
	return linkLocal4.Contains(v4) || slices.ContainsFunc(metadataAddresses, func(m cloudAddress) bool { return m.addr == v4 })
}

// policy is the address policy of one client.
type policy struct {
	allowLoopback, allowPrivate bool
}

// allows returns nil when p lets a be dialled, and otherwise the
// [*Error] of kind [Denied] that says why not.
func (p policy) allows(a netip.Addr) error {
	c, what := classify(a)
	if c == public || c == loopback && p.allowLoopback || c == private && p.allowPrivate {
		return nil
	}
	var unless string
	switch c {
	case loopback:
		unless = ", refused unless the host allows loopback"
	case private:
		unless = ", refused unless the host allows private addresses"
	}
	return &Error{Kind: Denied, Err: fmt.Errorf("%s is %s%s", a, what, unless)}
}

// control is the dialer's ControlContext: it runs on every address the
// dialer is about to connect to, after resolution and before the connect
// call, so nothing is sent to an address the policy refuses.
func (p policy) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{Kind: Denied, Err: fmt.Errorf("the dialer's address %q is not an IP address and port", address)}
	}
	return p.allows(ap.Addr())
}
