package events

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrNoOrigin is wrapped by every error [Origin], [PeerDigest] and
// [AppendPeerDigest] return, so that callers can tell "this peer URL can
// never be digested" from other failures with errors.Is. The concrete error
// is an [*OriginError] naming what was wrong.
var ErrNoOrigin = errors.New("events: URL has no origin")

// OriginError reports why a URL has no origin. It unwraps to [ErrNoOrigin].
type OriginError struct {
	// URL is the input as given, except that a password in its userinfo is
	// replaced by "xxxxx": peer URLs may carry credentials, and errors end
	// up in logs.
	URL string
	// Reason names what was wrong, e.g. `scheme "ftp" has no origin`.
	Reason string
}

// Error names the URL (its password masked) and why it has no origin.
func (e *OriginError) Error() string {
	return "events: peer URL " + strconv.Quote(e.URL) + ": " + e.Reason
}

// Unwrap returns [ErrNoOrigin].
func (e *OriginError) Unwrap() error { return ErrNoOrigin }

func originErrorf(rawURL, format string, args ...any) error {
	return &OriginError{URL: redactUserinfo(rawURL), Reason: fmt.Sprintf(format, args...)}
}

// Origin returns the WHATWG URL Standard serialization of the origin of
// rawURL: "scheme://host" or "scheme://host:port", with no trailing slash.
//
// Only http, https, ws and wss URLs have such an origin here. Every other
// URL (ftp, file, data, mailto, blob, a relative reference, a URL with no
// host) is an error wrapping [ErrNoOrigin], never a best guess, because a
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
// one peer ("HTTPS://Peer.example:443/x") one digest. An error wraps
// [ErrNoOrigin] and the digest is then empty.
func PeerDigest(rawURL string) (string, error) {
	var out [2 * sha256.Size]byte
	d, err := AppendPeerDigest(out[:0], rawURL)
	if err != nil {
		return "", err
	}
	return string(d), nil
}

// AppendPeerDigest appends [PeerDigest](rawURL) to dst, for callers that
// keep digests in their own buffers and want no allocation at all. On error
// dst is returned unchanged.
func AppendPeerDigest(dst []byte, rawURL string) ([]byte, error) {
	var buf [256]byte
	b, _, err := appendOrigin(buf[:0], rawURL)
	if err != nil {
		return dst, err
	}
	sum := sha256.Sum256(b)
	return hex.AppendEncode(dst, sum[:]), nil
}

// appendOrigin appends the origin of rawURL to dst. It also returns the
// string actually parsed (rawURL trimmed and without tabs or newlines), so
// that Origin can hand back a substring instead of a copy.
func appendOrigin(dst []byte, rawURL string) ([]byte, string, error) {
	s := cleanURL(rawURL)
	if s == "" {
		return dst, s, originErrorf(rawURL, "empty URL has no origin")
	}
	colon := schemeEnd(s)
	if colon == 0 {
		return dst, s, originErrorf(rawURL, "no scheme: a relative reference has no origin (want http://, https://, ws:// or wss://)")
	}
	scheme, defaultPort := specialScheme(s[:colon])
	if scheme == "" {
		return dst, s, originErrorf(rawURL, "scheme %q has no origin (want http, https, ws or wss)", strings.ToLower(s[:colon]))
	}
	rest := s[colon+1:]
	// The special authority states skip every '/' and '\' before the
	// authority, however many there are.
	for len(rest) > 0 && (rest[0] == '/' || rest[0] == '\\') {
		rest = rest[1:]
	}
	rest = authority(rest)
	host, port := splitHostPort(rest)
	if host == "" {
		return dst, s, originErrorf(rawURL, "missing host")
	}
	portNum, err := parsePort(port, rawURL)
	if err != nil {
		return dst, s, err
	}
	dst = append(dst, scheme...)
	dst = append(dst, "://"...)
	dst, err = appendHost(dst, host, rawURL)
	if err != nil {
		return dst, s, err
	}
	if portNum >= 0 && portNum != defaultPort {
		dst = append(dst, ':')
		dst = strconv.AppendUint(dst, uint64(portNum), 10)
	}
	return dst, s, nil
}

// cleanURL applies the URL Standard's input preprocessing: strip leading
// and trailing C0 controls and spaces, then remove every tab and newline.
func cleanURL(raw string) string {
	i, j := 0, len(raw)
	for i < j && raw[i] <= ' ' {
		i++
	}
	for j > i && raw[j-1] <= ' ' {
		j--
	}
	s := raw[i:j]
	k := 0
	for k < len(s) && s[k] != '\t' && s[k] != '\n' && s[k] != '\r' {
		k++
	}
	if k == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for k := 0; k < len(s); k++ {
		if c := s[k]; c != '\t' && c != '\n' && c != '\r' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// authority returns the host and port at the start of rest: up to the
// first '/', '\', '?' or '#', and after the last '@' before it (earlier ones
// belong to userinfo).
func authority(rest string) string {
	start := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '/', '\\', '?', '#':
			return rest[start:i]
		case '@':
			start = i + 1
		}
	}
	return rest[start:]
}

// schemeEnd returns the index of the ':' ending s's scheme, or 0 when s
// does not start with one (a relative reference): a scheme is never empty.
func schemeEnd(s string) int {
	if len(s) == 0 || !isASCIIAlpha(s[0]) {
		return 0
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i
		case isASCIIAlpha(c), '0' <= c && c <= '9', c == '+', c == '-', c == '.':
		default:
			return 0
		}
	}
	return 0
}

func isASCIIAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// specialScheme returns the canonical spelling and default port of scheme,
// or "" when it has no origin of its own.
func specialScheme(scheme string) (string, int) {
	switch {
	case strings.EqualFold(scheme, "https"):
		return "https", 443
	case strings.EqualFold(scheme, "http"):
		return "http", 80
	case strings.EqualFold(scheme, "wss"):
		return "wss", 443
	case strings.EqualFold(scheme, "ws"):
		return "ws", 80
	}
	return "", 0
}

// splitHostPort splits an authority (without userinfo) at its first ':'
// outside brackets, as the URL Standard's host state does.
func splitHostPort(authority string) (host, port string) {
	inBrackets := false
	for i := 0; i < len(authority); i++ {
		switch authority[i] {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				return authority[:i], authority[i+1:]
			}
		}
	}
	return authority, ""
}

// parsePort returns the port number, or -1 when port is empty (which the
// URL Standard treats as no port at all).
func parsePort(port, rawURL string) (int, error) {
	if port == "" {
		return -1, nil
	}
	n := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return 0, originErrorf(rawURL, "port %q is not a decimal number", port)
		}
		if n <= math.MaxUint16 {
			n = n*10 + int(c-'0')
		}
	}
	if n > math.MaxUint16 {
		return 0, originErrorf(rawURL, "port %q is out of range (max 65535)", port)
	}
	return n, nil
}

func appendHost(dst []byte, host, rawURL string) ([]byte, error) {
	if host[0] == '[' {
		// A lone "[" is its own last byte, so it fails this too.
		if host[len(host)-1] != ']' {
			return dst, originErrorf(rawURL, "IPv6 literal %q has no closing ']'", host)
		}
		return appendIPv6(dst, host[1:len(host)-1], rawURL)
	}
	if strings.IndexByte(host, '%') >= 0 {
		host = percentDecode(host)
	}
	return appendDomain(dst, host, rawURL)
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
	b := addr.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	// Compress the first longest run of two or more zero pieces.
	compress, longest := -1, 1
	for i := 0; i < len(pieces); {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < len(pieces) && pieces[j] == 0 {
			j++
		}
		if j-i > longest {
			compress, longest = i, j-i
		}
		i = j
	}
	dst = append(dst, '[')
	for i := 0; i < len(pieces); i++ {
		if i == compress {
			if i == 0 {
				dst = append(dst, ':')
			}
			dst = append(dst, ':')
			i += longest - 1
			continue
		}
		dst = strconv.AppendUint(dst, uint64(pieces[i]), 16)
		if i != len(pieces)-1 {
			dst = append(dst, ':')
		}
	}
	return append(dst, ']'), nil
}

// percentDecode decodes %XX escapes, leaving a '%' not followed by two hex
// digits in place (it is then rejected as a forbidden host code point).
func percentDecode(s string) string {
	var buf [256]byte
	b := buf[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		}
		b = append(b, c)
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
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
		for i := 0; i < len(host); i++ {
			c := host[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
	} else {
		ascii, err := domainToASCII(host)
		if err != nil {
			return dst, originErrorf(rawURL, "host %q: %v", host, err)
		}
		dst = append(dst, ascii...)
	}
	domain := dst[start:]
	if len(domain) == 0 {
		return dst, originErrorf(rawURL, "host %q is empty once mapped", host)
	}
	for _, c := range domain {
		if isForbiddenHostByte(c) {
			return dst, originErrorf(rawURL, "host contains forbidden code point %U %q", rune(c), rune(c))
		}
	}
	if !endsInNumber(domain) {
		return dst, nil
	}
	v, ok := parseIPv4(domain)
	if !ok {
		return dst, originErrorf(rawURL, "host %q ends in a number but is not an IPv4 address", string(domain))
	}
	dst = dst[:start]
	for k := 3; k >= 0; k-- {
		dst = strconv.AppendUint(dst, uint64(v>>(8*k)&0xff), 10)
		if k > 0 {
			dst = append(dst, '.')
		}
	}
	return dst, nil
}

// isPlainASCII reports whether host is ASCII with no label starting with
// "xn--" in any case: the hosts whose mapping is lowercasing alone.
func isPlainASCII(host string) bool {
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			return false
		}
	}
	for label := range strings.SplitSeq(host, ".") {
		if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
			return false
		}
	}
	return true
}

// domainToASCII runs UTS #46 on a host that is not plain ASCII.
func domainToASCII(host string) (string, error) {
	if !utf8.ValidString(host) {
		// The URL Standard decodes to U+FFFD, which UTS #46 disallows.
		return "", errors.New("not valid UTF-8")
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
	u, _ := idna.Punycode.ToUnicode(ascii)
	return ascii, checkBrowserAgreement(u)
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
	bidiDomain, newer := false, rune(-1)
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
	if bidiDomain && newer >= 0 {
		return fmt.Errorf("right-to-left text beside %U, a code point of Unicode 14 or later, is not accepted here", newer)
	}
	return nil
}

// endsInNumber is the URL Standard's "ends in a number checker".
func endsInNumber(host []byte) bool {
	if len(host) > 0 && host[len(host)-1] == '.' {
		host = host[:len(host)-1]
		if len(host) == 0 {
			return false
		}
	}
	lastLabel := host
	if i := lastIndexByte(host, '.'); i >= 0 {
		lastLabel = host[i+1:]
	}
	if len(lastLabel) == 0 {
		return false
	}
	allDigits := true
	for _, c := range lastLabel {
		if c < '0' || c > '9' {
			allDigits = false
			break
		}
	}
	if allDigits {
		return true
	}
	_, ok := parseIPv4Number(lastLabel)
	return ok
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// parseIPv4 is the URL Standard's IPv4 parser.
func parseIPv4(host []byte) (uint32, bool) {
	if len(host) > 0 && host[len(host)-1] == '.' {
		host = host[:len(host)-1]
	}
	var numbers [4]uint64
	n := 0
	for {
		part := host
		i := indexByte(host, '.')
		if i >= 0 {
			part = host[:i]
		}
		if n == len(numbers) {
			return 0, false
		}
		v, ok := parseIPv4Number(part)
		if !ok {
			return 0, false
		}
		numbers[n] = v
		n++
		if i < 0 {
			break
		}
		host = host[i+1:]
	}
	for _, v := range numbers[:n-1] {
		if v > 255 {
			return 0, false
		}
	}
	if numbers[n-1] >= 1<<(8*(5-n)) {
		return 0, false
	}
	v := numbers[n-1]
	for i, p := range numbers[:n-1] {
		v += p << (8 * (3 - i))
	}
	return uint32(v), true
}

func indexByte(b []byte, c byte) int {
	for i := range b {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// parseIPv4Number is the URL Standard's IPv4 number parser. Values past
// 2^32 saturate: they are rejected by the caller all the same.
func parseIPv4Number(s []byte) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	radix := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && s[1]|0x20 == 'x':
		s, radix = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, radix = s[1:], 8
	}
	var v uint64
	for _, c := range s {
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c|0x20 && c|0x20 <= 'f':
			d = uint64(c|0x20-'a') + 10
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		if v <= 1<<32 {
			v = v*radix + d
		}
	}
	return v, true
}

// redactUserinfo hides a password in rawURL's userinfo, the way
// net/url.URL.Redacted does, so that error messages are safe to log.
func redactUserinfo(rawURL string) string {
	colon := strings.IndexByte(rawURL, ':')
	if colon < 0 {
		return rawURL
	}
	auth := colon + 1
	for auth < len(rawURL) && (rawURL[auth] == '/' || rawURL[auth] == '\\') {
		auth++
	}
	end := len(rawURL)
	if i := strings.IndexAny(rawURL[auth:], "/\\?#"); i >= 0 {
		end = auth + i
	}
	at := strings.LastIndexByte(rawURL[auth:end], '@')
	if at < 0 {
		return rawURL
	}
	at += auth
	pw := strings.IndexByte(rawURL[auth:at], ':')
	if pw < 0 {
		return rawURL
	}
	pw += auth
	return rawURL[:pw+1] + "xxxxx" + rawURL[at:]
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
