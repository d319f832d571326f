package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// originErrorf returns the [*FieldError] of a peer URL with no origin. The
// URL is quoted with the password of its userinfo, if any, replaced by
// "xxxxx": peer URLs may carry credentials, and errors end up in logs.
func originErrorf(rawURL, format string, args ...any) error {
	return &FieldError{Field: "peer", Reason: strconv.Quote(redactUserinfo(rawURL)) + ": " + fmt.Sprintf(format, args...)}
}

// Origin returns the WHATWG URL Standard serialization of the origin of
// rawURL: "scheme://host" or "scheme://host:port", with no trailing slash.
//
// Only http, https, ws and wss URLs have such an origin here. Every other
// URL (ftp, file, data, mailto, blob, a relative reference, a URL with no
// host) is an error, a [*FieldError] for the field "peer", never a best guess, because a
// guess would give two spellings of one peer two digests, or one digest to
// two peers. ftp is refused too, although the URL Standard gives it an
// origin: no negotiation peer is reached over it.
//
// It follows the URL Standard's basic URL parser for special URLs: leading
// and trailing C0 controls and spaces are stripped, tabs and newlines
// anywhere are removed, the scheme is matched case-insensitively, any run
// of '/' or '\' after "scheme:" is accepted ("https:host" and
// "https:///host" are "https://host"), and userinfo, path, query and
// fragment are dropped. The port is normalized ("0080" is 80) and dropped
// when it is the scheme's default (80 for http and ws, 443 for https and
// wss); an empty port after ':' is no port.
//
// IPv6 literals must be bracketed, may not carry a zone, and are written
// compressed ("[::1]", "[::ffff:c000:201]"). Any other host is
// percent-decoded and run through the URL Standard's "domain to ASCII":
// UTS #46 as browsers apply it (golang.org/x/net/idna: mapping, NFC,
// nontransitional, CheckBidi and CheckJoiners, no STD3 rules, hyphen or DNS
// length checks), then the forbidden domain code point check. A host whose
// last label is then a number is the URL Standard's IPv4 address (decimal,
// 0x hex, leading-0 octal, one to four parts: "0x7f.1" is "127.0.0.1"),
// and an error when it is not one. Empty labels are kept ("a..b"), as
// browsers keep them.
//
// The rule is that Origin gives the origin a WHATWG parser gives or an
// error, never a third answer. Where x/net/idna and browsers (Node 20's
// parser, checked by TestOriginAgainstNode) disagree, Origin refuses: a
// host x/net/idna maps to something it would not accept again (the bidi
// rule skipped for "ℵ", which maps to Hebrew), an empty "xn--" label or
// one that mapping empties, U+200C not after a virama, and right-to-left
// text in a domain holding a code point of Unicode 14 or later, whose bidi
// classes Node's parser does not know. x/net/idna is stricter than browsers
// elsewhere too (an "xn--" label that decodes to ASCII, a label starting
// with an Arabic-Indic digit): those are refused as well.
//
// One peer has one origin whatever Go release built the host. Go 1.26
// builds x/net/idna with Unicode 15.0 tables and Go 1.27 with 17.0, which
// read 10,683 code points apart (ẞ is "ss" with one and "ß" with the
// other; what Unicode 16.0 and 17.0 assigned is refused by one and
// accepted by the other). Origin refuses a host holding any of them, as
// it is written or as an "xn--" label spells it, on both releases: the
// stricter reading. TestOriginIsTheSameOnEveryGoRelease holds the two to
// one reading.
//
// The result is a substring of rawURL when rawURL already starts with its
// canonical origin, which is what keeps this cheap on a hot path.
func Origin(rawURL string) (string, error) {
	var buf [256]byte
	b, s, err := appendOrigin(buf[:0], rawURL)
	if err != nil {
		return "", err
	}
	if len(b) <= len(s) && string(b) == s[:len(b)] {
		return s[:len(b)], nil
	}
	return string(b), nil
}

// PeerDigest returns the lowercase hex SHA-256 (64 characters, no prefix)
// of [Origin](rawURL). Digesting the origin rather than the URL keeps paths,
// queries and credentials out of the record, and makes every spelling of
// one peer ("HTTPS://Peer.example:443/x") one digest. An error is the
// [*FieldError] of [Origin], and the digest is then empty.
func PeerDigest(rawURL string) (string, error) {
	var buf [256]byte
	b, _, err := appendOrigin(buf[:0], rawURL)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:]), nil
}

// appendOrigin appends the origin of rawURL to dst. It also returns the
// string actually parsed (rawURL trimmed and without tabs or newlines), so
// that Origin can hand back a substring instead of a copy.
func appendOrigin(dst []byte, rawURL string) ([]byte, string, error) {
	s := cleanURL(rawURL)
	scheme, rest, found := strings.Cut(s, ":")
	canon, defaultPort := specialScheme(scheme)
	if canon == "" {
		if !found || !isScheme(scheme) {
			return dst, s, originErrorf(rawURL, "no scheme: a relative reference has no origin (want http://, https://, ws:// or wss://)")
		}
		return dst, s, originErrorf(rawURL, "scheme %q has no origin (want http, https, ws or wss)", strings.ToLower(scheme))
	}
	_, hostPort := splitAuthority(rest)
	host, port := splitHostPort(hostPort)
	if host == "" {
		return dst, s, originErrorf(rawURL, "missing host")
	}
	portNum, err := parsePort(port, rawURL)
	if err != nil {
		return dst, s, err
	}
	dst = append(dst, canon...)
	dst = append(dst, "://"...)
	dst, err = appendHost(dst, host, rawURL)
	if err != nil {
		return dst, s, err
	}
	if portNum != defaultPort && port != "" {
		dst = append(dst, ':')
		dst = strconv.AppendUint(dst, portNum, 10)
	}
	return dst, s, nil
}

// cleanURL applies the URL Standard's input preprocessing: strip leading
// and trailing C0 controls and spaces, then remove every tab and newline.
func cleanURL(raw string) string {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
}

// splitAuthority splits what follows "scheme:" in a special URL into
// userinfo and host-and-port. The special authority states skip every '/'
// and '\' first, however many there are; the authority ends at the next
// '/', '\', '?' or '#'; its last '@' ends the userinfo.
func splitAuthority(rest string) (userinfo, hostPort string) {
	rest = strings.TrimLeft(rest, "/\\")
	if i := strings.IndexAny(rest, "/\\?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndexByte(rest, '@')
	return rest[:max(at, 0)], rest[at+1:]
}

// isScheme reports whether s is a URL scheme: an ASCII letter, then ASCII
// letters, digits, '+', '-' and '.'.
func isScheme(s string) bool {
	return s != "" && strings.Trim(s[:1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" &&
		strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.") == ""
}

// specialScheme returns the canonical spelling and default port of scheme,
// or "" when it has no origin of its own.
func specialScheme(scheme string) (string, uint64) {
	for _, s := range [...]struct {
		name string
		port uint64
	}{{"https", 443}, {"http", 80}, {"wss", 443}, {"ws", 80}} {
		if strings.EqualFold(scheme, s.name) {
			return s.name, s.port
		}
	}
	return "", 0
}

// splitHostPort splits an authority (without userinfo) at its first ':'
// after an IPv6 literal's closing ']', as the URL Standard's host state
// does for every host it can accept.
func splitHostPort(hostPort string) (host, port string) {
	if strings.HasPrefix(hostPort, "[") && !strings.Contains(hostPort, "]") {
		return hostPort, "" // no ':' splits an unclosed literal
	}
	// The port's ':' is the first after an IPv6 literal's ']'.
	end := max(strings.IndexByte(hostPort, ']'), 0)
	if i := strings.IndexByte(hostPort[end:], ':'); i >= 0 {
		return hostPort[:end+i], hostPort[end+i+1:]
	}
	return hostPort, ""
}

// parsePort returns the port number; an empty port is no port at all.
func parsePort(port, rawURL string) (uint64, error) {
	if port == "" {
		return 0, nil
	}
	if strings.Trim(port, "0123456789") != "" {
		return 0, originErrorf(rawURL, "port %q is not a decimal number", port)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return 0, originErrorf(rawURL, "port %q is out of range (max 65535)", port)
	}
	return n, nil
}

func appendHost(dst []byte, host, rawURL string) ([]byte, error) {
	if strings.HasPrefix(host, "[") {
		literal, ok := strings.CutSuffix(host[1:], "]")
		if !ok {
			return dst, originErrorf(rawURL, "IPv6 literal %q has no closing ']'", host)
		}
		return appendIPv6(dst, literal, rawURL)
	}
	decoded, err := url.PathUnescape(host)
	if err != nil {
		// The URL Standard leaves a '%' without two hex digits in place,
		// and then refuses it.
		return dst, originErrorf(rawURL, "host contains forbidden code point U+0025 '%%'")
	}
	return appendDomain(dst, decoded, rawURL)
}

// appendIPv6 writes an IPv6 literal in the URL Standard's serialization,
// which is RFC 5952's except that IPv4-mapped addresses stay in hex
// ("::ffff:c000:201"); netip.Addr.String would write dotted decimal.
func appendIPv6(dst []byte, literal, rawURL string) ([]byte, error) {
	if i := strings.IndexByte(literal, '%'); i >= 0 {
		return dst, originErrorf(rawURL, "IPv6 zone %q is not allowed in a URL", literal[i:])
	}
	addr, err := netip.ParseAddr(literal)
	if err != nil || !addr.Is6() {
		return dst, originErrorf(rawURL, "invalid IPv6 address [%s]", literal)
	}
	if addr.Is4In6() {
		b := addr.As16()
		dst = append(dst, "[::ffff:"...)
		dst = strconv.AppendUint(dst, uint64(b[12])<<8|uint64(b[13]), 16)
		dst = append(dst, ':')
		dst = strconv.AppendUint(dst, uint64(b[14])<<8|uint64(b[15]), 16)
		return append(dst, ']'), nil
	}
	dst = append(dst, '[')
	dst = addr.AppendTo(dst)
	return append(dst, ']'), nil
}

// uts46 is the URL Standard's "domain to ASCII" with beStrict false:
// UTS #46 nontransitional processing (mapping, NFC, the validity criteria)
// with CheckHyphens=false, CheckBidi=true, CheckJoiners=true,
// UseSTD3ASCIIRules=false and VerifyDnsLength=false. MapForLookup turns on
// STD3 rules and hyphen checks, so the options after it turn them off
// again; later options win.
var uts46 = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.VerifyDNSLength(false),
)

// appendDomain maps a percent-decoded domain to ASCII as the URL Standard's
// host parser does and appends it, or its IPv4 serialization when it ends
// in a number.
func appendDomain(dst []byte, host, rawURL string) ([]byte, error) {
	start := len(dst)
	if isPlainASCII(host) {
		// The URL Standard's own shortcut: for ASCII with no "xn--" label,
		// domain to ASCII is ASCII lowercasing.
		dst = append(dst, strings.ToLower(host)...)
	} else {
		ascii, err := domainToASCII(host)
		if err != nil {
			return dst, originErrorf(rawURL, "host %q: %v", host, err)
		}
		dst = append(dst, ascii...)
	}
	// Not empty: host is not, and domainToASCII refuses what mapping
	// empties.
	domain := dst[start:]
	for _, c := range domain {
		if isForbiddenHostByte(c) {
			return dst, originErrorf(rawURL, "host contains forbidden code point %U %q", rune(c), rune(c))
		}
	}
	if !endsInNumber(domain) {
		return dst, nil
	}
	addr, ok := parseIPv4(domain)
	if !ok {
		return dst, originErrorf(rawURL, "host %q ends in a number but is not an IPv4 address", string(domain))
	}
	return addr.AppendTo(dst[:start]), nil
}

// isPlainASCII reports whether host is ASCII with no label starting with
// "xn--" in any case: the hosts whose mapping is lowercasing alone.
func isPlainASCII(host string) bool {
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			return false
		}
	}
	for rest := host; ; {
		label, tail, more := strings.Cut(rest, ".")
		if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
			return false
		}
		if !more {
			return true
		}
		rest = tail
	}
}

// domainToASCII runs UTS #46 on a host that is not plain ASCII.
func domainToASCII(host string) (string, error) {
	if !utf8.ValidString(host) {
		// The URL Standard decodes to U+FFFD, which UTS #46 disallows.
		return "", errors.New("not valid UTF-8")
	}
	if err := checkRelease(host); err != nil {
		return "", err
	}
	ascii, err := uts46.ToASCII(host)
	if err != nil {
		return "", err
	}
	// x/net/idna decides whether the bidi rule applies from the code points
	// before mapping, so "aℵb" (ℵ maps to Hebrew א) escapes it. Its checks
	// of an xn-- label look at the decoded text: the result must pass them.
	if again, err := uts46.ToASCII(ascii); err != nil || again != ascii {
		return "", fmt.Errorf("maps to %q, which UTS #46 does not accept as it is", ascii)
	}
	// x/net/idna decodes "xn--" to an empty label; UTS #46 refuses that.
	// A label that mapping empties ("\u00ad") is refused with it.
	if emptyLabels(ascii) > emptyLabels(host) {
		return "", fmt.Errorf("maps to %q, which has an empty label the input does not have", ascii)
	}
	// Every label of ascii came out of the Punycode encoder: it decodes.
	// An xn-- label of the input decodes here to what it spells, which the
	// release check has not seen yet.
	u, _ := idna.Punycode.ToUnicode(ascii)
	if err := checkRelease(u); err != nil {
		return "", err
	}
	return ascii, checkBrowserAgreement(u)
}

// checkRelease refuses a domain holding a code point of releaseDrift: Go
// 1.26 and Go 1.27 build x/net/idna with tables of different Unicode
// versions, and without this check a host built by one would record ẞ.de
// as ss.de, and one built by the other as xn--zca.de. The stricter of the
// two readings, on both releases: refused.
func checkRelease(domain string) error {
	for _, r := range domain {
		if unicode.Is(releaseDrift, r) {
			return fmt.Errorf("%U is read differently by the IDNA tables of Go 1.26 (Unicode 15.0) and Go 1.27 (Unicode 17.0), so it is not accepted here", r)
		}
	}
	return nil
}

// emptyLabels counts the empty labels of a domain split at the full stops
// UTS #46 maps to '.', the root label after a trailing dot included.
func emptyLabels(domain string) int {
	n, atStart := 0, true
	for _, r := range domain + "." {
		sep := r == '.' || r == '\u3002' || r == '\uff0e' || r == '\uff61'
		if sep && atStart {
			n++
		}
		atStart = sep
	}
	return n
}

// checkBrowserAgreement refuses the domains, given as U-labels, that
// x/net/idna accepts and browsers do not, found by TestOriginAgainstNode:
//
//   - U+200C ZERO WIDTH NON-JOINER not after a virama: x/net/idna lets a
//     non-joining code point follow it ("ب\u200c1"), which RFC 5892 and
//     browsers do not. Persian names that use it between two joining
//     letters are refused too: the tables to tell them apart are not here.
//   - a bidi domain holding a code point of Unicode 14 or 15: Node's
//     parser does not know their bidi classes and refuses most of them.
func checkBrowserAgreement(u string) error {
	var prev rune
	bidiDomain, newer := false, rune(0)
	for _, r := range u {
		if r == '\u200c' && !unicode.Is(viramas, prev) {
			return errors.New("U+200C ZERO WIDTH NON-JOINER is accepted here only after a virama")
		}
		bidiDomain = bidiDomain || unicode.Is(rtlBlocks, r)
		if unicode.Is(unicode14, r) {
			newer = r
		}
		prev = r
	}
	if bidiDomain && newer != 0 {
		return fmt.Errorf("right-to-left text beside %U, a code point of Unicode 14 or later, is not accepted here", newer)
	}
	return nil
}

// endsInNumber is the URL Standard's "ends in a number checker".
func endsInNumber(domain []byte) bool {
	domain = bytes.TrimSuffix(domain, []byte("."))
	last := domain[bytes.LastIndexByte(domain, '.')+1:]
	if len(last) > 0 && len(bytes.Trim(last, "0123456789")) == 0 {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4 is the URL Standard's IPv4 parser: up to four numbers, the
// last filling the bits the others leave.
func parseIPv4(domain []byte) (netip.Addr, bool) {
	rest := bytes.TrimSuffix(domain, []byte("."))
	var v uint64
	for i := 0; ; i++ {
		part, tail, more := bytes.Cut(rest, []byte("."))
		n, ok := parseIPv4Number(part)
		if !more {
			if !ok || n >= 1<<(32-8*i) {
				return netip.Addr{}, false
			}
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], uint32(v|n))
			return netip.AddrFrom4(b), true
		}
		if !ok || n > 255 || i == 3 {
			return netip.Addr{}, false
		}
		v |= n << (24 - 8*i)
		rest = tail
	}
}

// parseIPv4Number is the URL Standard's IPv4 number parser. Values past
// 2^64 saturate: the caller refuses them all the same.
func parseIPv4Number(s []byte) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	base, digits := 10, "0123456789"
	if s[0] == '0' {
		// A leading 0 means octal, 0x or 0X hex; "0" and "0x" are zero.
		s, base, digits = s[1:], 8, "01234567"
		if len(s) > 0 && s[0]|0x20 == 'x' {
			s, base, digits = s[1:], 16, "0123456789abcdefABCDEF"
		}
	}
	if len(bytes.Trim(s, digits)) != 0 {
		return 0, false
	}
	if len(s) == 0 {
		return 0, true
	}
	n, err := strconv.ParseUint(string(s), base, 64)
	if err != nil {
		return math.MaxUint64, true // out of range, but all digits
	}
	return n, true
}

// redactUserinfo hides a password in rawURL's userinfo, the way
// net/url.URL.Redacted does, so that error messages are safe to log.
func redactUserinfo(rawURL string) string {
	_, rest, _ := strings.Cut(rawURL, ":")
	userinfo, _ := splitAuthority(rest)
	user, _, hasPassword := strings.Cut(userinfo, ":")
	if !hasPassword {
		return rawURL
	}
	i := len(rawURL) - len(rest) + strings.Index(rest, userinfo)
	return rawURL[:i] + user + ":xxxxx" + rawURL[i+len(userinfo):]
}

// isForbiddenHostByte reports the URL Standard's forbidden domain code
// points, all of which are ASCII: C0 controls, space, DEL and
// #%/:<>?@[\]^|.
func isForbiddenHostByte(c byte) bool {
	if c <= ' ' || c == 0x7f {
		return true
	}
	switch c {
	case '#', '%', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}
