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
// compressed ("[::1]", "[::ffff:c000:201]"). A host whose last label is a
// number is the URL Standard's IPv4 address (decimal, 0x hex, leading-0
// octal, one to four parts: "0x7f.1" is "127.0.0.1"), and an error when it
// is not one. Any other host is percent-decoded and mapped to ASCII:
// labels split on '.', U+3002, U+FF0E and U+FF61; fullwidth ASCII
// (U+FF01–U+FF5E) folds to ASCII; letters are lowercased with
// [unicode.ToLower]; a label left with non-ASCII becomes "xn--" and its
// RFC 3492 Punycode; and the RFC 5893 bidi rule is checked as UTS #46
// checks it. A single trailing dot is kept, as the URL Standard keeps it.
//
// That mapping is not full UTS #46: no NFC or NFKC normalization beyond
// the fullwidth forms is applied, so callers should pass NFC input. Such
// input maps as a browser maps it or is rejected: a code point whose
// UTS #46 mapping is more than lowercasing (a compatibility character such
// as "ℌ" or "ﬁ", a full case folding such as "ẞ" to "ss") is an error, not
// a guess. The same caution makes Origin stricter than the URL Standard
// for empty labels other than a trailing one, labels over 63 octets and
// hosts over 253 once encoded, non-ASCII code points that are not graphic
// (U+00AD, U+200D, controls, unassigned ones) or are spaces, labels that
// start with a combining mark or combine one with a Latin, Greek or
// Cyrillic letter (the decomposed forms NFC would compose), bidi labels holding symbols whose direction
// the standard library cannot tell, and "xn--" labels that are not the
// canonical Punycode of a valid non-ASCII label.
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

const (
	maxLabelOctets = 63
	maxHostOctets  = 253
)

// appendDomain maps a (percent-decoded) domain to ASCII and appends it, or
// its IPv4 serialization when it ends in a number.
func appendDomain(dst []byte, host, rawURL string) ([]byte, error) {
	start := len(dst)
	// Scratch for one label's code points. A label of more runes than
	// maxLabelOctets cannot fit in maxLabelOctets octets, so this suffices.
	var label [maxLabelOctets]rune
	hasACE := false
	for i := 0; ; {
		j, sep, ascii := i, 0, true
	scan:
		for j < len(host) {
			c := host[j]
			if c < utf8.RuneSelf {
				if c == '.' {
					sep = 1
					break
				}
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(host[j:])
			switch {
			case r == utf8.RuneError && size == 1:
				return dst, originErrorf(rawURL, "host is not valid UTF-8")
			case isLabelSeparator(r):
				sep = size
				break scan
			}
			ascii = false
			j += size
		}
		last := j == len(host)
		if i == j {
			// Only the root label after a trailing dot may be empty.
			if !last || i == 0 {
				return dst, originErrorf(rawURL, "host %q has an empty label", host)
			}
			break
		}
		var err error
		labelStart := len(dst)
		if ascii {
			dst, err = appendASCIILabel(dst, host[i:j], rawURL)
		} else {
			dst, err = appendUnicodeLabel(dst, host[i:j], label[:0], rawURL)
		}
		if err != nil {
			return dst, err
		}
		hasACE = hasACE || isACE(dst[labelStart:])
		if last {
			break
		}
		dst = append(dst, '.')
		i = j + sep
	}

	if endsInNumber(dst[start:]) {
		v, ok := parseIPv4(dst[start:])
		if !ok {
			return dst, originErrorf(rawURL, "host %q ends in a number but is not an IPv4 address", string(dst[start:]))
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
	if hasACE {
		if err := checkBidi(dst[start:]); err != nil {
			return dst, originErrorf(rawURL, "host %q %v", host, err)
		}
	}
	n := len(dst) - start
	if dst[len(dst)-1] == '.' {
		n-- // the root label's dot is not part of the DNS length limit
	}
	if n > maxHostOctets {
		return dst, originErrorf(rawURL, "host is %d octets long once encoded (max %d)", n, maxHostOctets)
	}
	return dst, nil
}

// isLabelSeparator reports the full stops UTS #46 maps to '.'.
func isLabelSeparator(r rune) bool {
	return r == '.' || r == '\u3002' || r == '\uff0e' || r == '\uff61'
}

func appendASCIILabel(dst []byte, label, rawURL string) ([]byte, error) {
	if len(label) > maxLabelOctets {
		return dst, originErrorf(rawURL, "host label %q is longer than %d octets", label, maxLabelOctets)
	}
	start := len(dst)
	for k := 0; k < len(label); k++ {
		c := label[k]
		if isForbiddenHostByte(c) {
			return dst, originErrorf(rawURL, "host contains forbidden code point %U %q", rune(c), rune(c))
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return checkACELabel(dst, dst[start:], rawURL)
}

func appendUnicodeLabel(dst []byte, label string, runes []rune, rawURL string) ([]byte, error) {
	ascii := true
	for _, r := range label {
		if unicode.Is(uts46Divergent, r) {
			return dst, originErrorf(rawURL, "host contains code point %U %q, whose UTS #46 mapping is not implemented here", r, r)
		}
		m := mapRune(r)
		if m < utf8.RuneSelf {
			if isForbiddenHostByte(byte(m)) {
				return dst, originErrorf(rawURL, "host contains forbidden code point %U %q", r, r)
			}
		} else {
			if !isAllowedRune(m) {
				return dst, originErrorf(rawURL, "host contains disallowed code point %U %q", r, r)
			}
			ascii = false
		}
		if len(runes) == cap(runes) {
			return dst, originErrorf(rawURL, "host label %q is longer than %d octets once encoded", label, maxLabelOctets)
		}
		runes = append(runes, m)
	}
	start := len(dst)
	if ascii {
		// Fullwidth or compatibility letters only: the label is plain ASCII.
		for _, r := range runes {
			dst = append(dst, byte(r))
		}
		return checkACELabel(dst, dst[start:], rawURL)
	}
	if isACE(runes) {
		return dst, originErrorf(rawURL, "host label %q starts with xn-- but is not ASCII", label)
	}
	if unicode.In(runes[0], unicode.M) {
		return dst, originErrorf(rawURL, "host label %q starts with a combining mark", label)
	}
	for i := 1; i < len(runes); i++ {
		// Without normalization tables a decomposed "u\u0308" cannot be
		// told from what NFC would compose it into ("ü"), and the two
		// digest differently: refuse rather than guess.
		if unicode.In(runes[i], unicode.M) && unicode.In(runes[i-1], unicode.Latin, unicode.Greek, unicode.Cyrillic) {
			return dst, originErrorf(rawURL, "host label %q has a combining mark after a Latin, Greek or Cyrillic letter, which NFC may compose; pass NFC input", label)
		}
	}
	dst = append(dst, "xn--"...)
	dst, err := punyEncode(dst, runes)
	if err != nil || len(dst)-start > maxLabelOctets {
		return dst, originErrorf(rawURL, "host label %q is longer than %d octets once encoded", label, maxLabelOctets)
	}
	return dst, nil
}

// checkACELabel accepts an ASCII label unless it claims to be Punycode
// ("xn--") without being the canonical encoding of a valid non-ASCII
// label: a browser would reject it, or read it as another name than the
// one it would itself encode, and the digest must not depend on which.
func checkACELabel(dst, label []byte, rawURL string) ([]byte, error) {
	if !isACE(label) {
		return dst, nil
	}
	var runes [maxLabelOctets]rune
	decoded, err := punyDecode(runes[:0], label[4:])
	if err == nil {
		err = checkDecodedLabel(decoded)
	}
	if err == nil {
		var buf [maxLabelOctets]byte
		if enc, _ := punyEncode(buf[:0], decoded); string(enc) != string(label[4:]) {
			err = errors.New("not canonical Punycode")
		}
	}
	if err != nil {
		return dst, originErrorf(rawURL, "host label %q is not valid Punycode: %v", string(label), err)
	}
	return dst, nil
}

func checkDecodedLabel(decoded []rune) error {
	nonASCII := false
	for _, r := range decoded {
		if r < utf8.RuneSelf {
			continue
		}
		nonASCII = true
		if !isAllowedRune(r) {
			return fmt.Errorf("decodes to disallowed code point %U", r)
		}
		if mapRune(r) != r || unicode.Is(uts46Divergent, r) {
			return fmt.Errorf("decodes to unmapped code point %U", r)
		}
	}
	if !nonASCII {
		return errors.New("decodes to an ASCII label")
	}
	if unicode.In(decoded[0], unicode.M) {
		return errors.New("decodes to a label starting with a combining mark")
	}
	if isACE(decoded) {
		return errors.New("decodes to another xn-- label")
	}
	return nil
}

// isACE reports whether a label, as octets or as code points, starts with
// "xn--", the prefix of a Punycode label.
func isACE[T byte | rune](label []T) bool {
	return len(label) >= 4 && label[0] == 'x' && label[1] == 'n' && label[2] == '-' && label[3] == '-'
}

// A bidiClass is a code point's Unicode bidirectional class as far as the
// RFC 5893 bidi rule needs it. R stands for both R and AL, which the rule
// never tells apart.
type bidiClass uint8

const (
	bidiL bidiClass = iota
	bidiR
	bidiAN
	bidiEN
	bidiES
	bidiCS
	bidiET
	bidiON
	bidiNSM
	// bidiUnknown is a code point whose class the standard library's
	// tables cannot tell; a bidi domain holding one is rejected.
	bidiUnknown
	// bidiUnknownRTL is an unknown code point in a right-to-left block.
	bidiUnknownRTL
)

// rtlBlocks are the ranges whose letters are R or AL: the defaults of
// DerivedBidiClass.txt.
var rtlBlocks = [...][2]rune{
	{0x0590, 0x08ff},   // Hebrew to Arabic Extended-A
	{0xfb1d, 0xfdff},   // Hebrew and Arabic presentation forms
	{0xfe70, 0xfeff},   // Arabic presentation forms B
	{0x10800, 0x10fff}, // historic right-to-left scripts
	{0x1e800, 0x1efff}, // Mende Kikakui, Adlam, Arabic mathematical symbols
}

func bidiClassOf(r rune) bidiClass {
	if r < utf8.RuneSelf {
		switch {
		case '0' <= r && r <= '9':
			return bidiEN
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
			return bidiL
		case r == '+' || r == '-':
			return bidiES
		case r == ',' || r == '.' || r == '/' || r == ':':
			return bidiCS
		case r == '#' || r == '$' || r == '%':
			return bidiET
		}
		return bidiON
	}
	if unicode.In(r, unicode.Mn, unicode.Me) {
		return bidiNSM
	}
	for _, b := range rtlBlocks {
		if b[0] <= r && r <= b[1] {
			switch {
			case 0x0660 <= r && r <= 0x0669, r == 0x066b, r == 0x066c,
				0x10d30 <= r && r <= 0x10d39, 0x10e60 <= r && r <= 0x10e7e:
				return bidiAN
			case 0x06f0 <= r && r <= 0x06f9:
				return bidiEN
			case unicode.IsLetter(r), unicode.IsNumber(r):
				return bidiR
			}
			return bidiUnknownRTL
		}
	}
	switch {
	case unicode.Is(unicode.Lm, r) && 0x02b0 <= r && r <= 0x02ff:
		// Spacing modifier letters are partly ON.
		return bidiUnknown
	case unicode.IsLetter(r), unicode.In(r, unicode.Mc, unicode.Nd):
		return bidiL
	}
	return bidiUnknown
}

// checkBidi applies the bidi rule of RFC 5893 §2, which UTS #46 (and so
// the URL Standard) applies to every label once any label holds a
// right-to-left code point. It is only called for hosts with an xn--
// label: an all-ASCII host cannot be a bidi domain.
func checkBidi(host []byte) error {
	var buf [maxLabelOctets]rune
	rtl := false
	for rest := host; len(rest) > 0 && !rtl; {
		var label []byte
		label, rest = cutLabel(rest)
		if !isACE(label) {
			continue
		}
		runes, _ := punyDecode(buf[:0], label[4:])
		for _, r := range runes {
			if c := bidiClassOf(r); c == bidiR || c == bidiAN || c == bidiUnknownRTL {
				rtl = true
			}
		}
	}
	if !rtl {
		return nil
	}
	for rest := host; len(rest) > 0; {
		var label []byte
		label, rest = cutLabel(rest)
		var runes []rune
		if isACE(label) {
			runes, _ = punyDecode(buf[:0], label[4:])
		} else {
			runes = buf[:0]
			for _, c := range label {
				runes = append(runes, rune(c))
			}
		}
		if err := checkBidiLabel(runes); err != nil {
			return fmt.Errorf("breaks the RFC 5893 bidi rule: label %q %v", string(runes), err)
		}
	}
	return nil
}

// cutLabel splits the first label off a host.
func cutLabel(host []byte) (label, rest []byte) {
	if i := indexByte(host, '.'); i >= 0 {
		return host[:i], host[i+1:]
	}
	return host, nil
}

func checkBidiLabel(runes []rune) error {
	if len(runes) == 0 {
		return nil // the root label after a trailing dot
	}
	first := bidiClassOf(runes[0])
	if first != bidiL && first != bidiR {
		return errors.New("does not start with a letter")
	}
	last := first
	hasEN, hasAN := false, false
	for _, r := range runes {
		c := bidiClassOf(r)
		switch c {
		case bidiEN, bidiES, bidiCS, bidiET, bidiON:
		case bidiNSM:
			continue
		case bidiL:
			if first == bidiR {
				return fmt.Errorf("holds left-to-right %U in a right-to-left label", r)
			}
		case bidiR, bidiAN:
			if first == bidiL {
				return fmt.Errorf("holds right-to-left %U in a left-to-right label", r)
			}
		default:
			return fmt.Errorf("holds %U, whose direction cannot be checked", r)
		}
		hasEN = hasEN || c == bidiEN
		hasAN = hasAN || c == bidiAN
		last = c
	}
	if first == bidiR {
		if last != bidiR && last != bidiEN && last != bidiAN {
			return errors.New("does not end in a right-to-left letter or a digit")
		}
		if hasEN && hasAN {
			return errors.New("mixes European and Arabic-Indic digits")
		}
	} else if last != bidiL && last != bidiEN {
		return errors.New("does not end in a left-to-right letter or a digit")
	}
	return nil
}

// mapRune is this package's subset of the UTS #46 mapping: fullwidth ASCII
// to ASCII, then simple lowercasing. It is idempotent, which Origin's
// idempotence relies on.
func mapRune(r rune) rune {
	if '\uff01' <= r && r <= '\uff5e' {
		r -= '\uff01' - '!'
	}
	return unicode.ToLower(r)
}

// isAllowedRune reports whether a mapped non-ASCII code point may appear in
// a label. Non-graphic code points are rejected because UTS #46 ignores or
// disallows them, and spaces because it maps them to U+0020, which the URL
// Standard forbids; U+FFFD stands for input that was not UTF-8.
func isAllowedRune(r rune) bool {
	return r != utf8.RuneError && unicode.IsGraphic(r) && !unicode.Is(unicode.Zs, r) && !isLabelSeparator(r)
}

// isForbiddenHostByte reports the URL Standard's forbidden domain code
// points in the ASCII range.
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

// Punycode (RFC 3492) parameters for IDNA.
const (
	punyBase        = 36
	punyTMin        = 1
	punyTMax        = 26
	punySkew        = 38
	punyDamp        = 700
	punyInitialBias = 72
	punyInitialN    = 0x80
	punyMaxInt      = math.MaxInt32 // the RFC's overflow bound, kept on every platform
)

var errPunyOverflow = errors.New("punycode: overflow")

func punyAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((punyBase-punyTMin)*punyTMax)/2 {
		delta /= punyBase - punyTMin
		k += punyBase
	}
	return k + (punyBase-punyTMin+1)*delta/(delta+punySkew)
}

func punyThreshold(k, bias int) int {
	return min(max(k-bias, punyTMin), punyTMax)
}

func punyDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

// punyEncode appends the RFC 3492 encoding of input to dst. It does not
// fold case: basic code points are copied as they are.
func punyEncode(dst []byte, input []rune) ([]byte, error) {
	basic := 0
	for _, r := range input {
		if r < punyInitialN {
			dst = append(dst, byte(r))
			basic++
		}
	}
	if basic > 0 {
		dst = append(dst, '-')
	}
	n, delta, bias := punyInitialN, 0, punyInitialBias
	for h := basic; h < len(input); {
		m := math.MaxInt32
		for _, r := range input {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		if m-n > (punyMaxInt-delta)/(h+1) {
			return dst, errPunyOverflow
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range input {
			if int(r) < n {
				if delta++; delta > punyMaxInt {
					return dst, errPunyOverflow
				}
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := punyBase; ; k += punyBase {
				t := punyThreshold(k, bias)
				if q < t {
					break
				}
				dst = append(dst, punyDigit(t+(q-t)%(punyBase-t)))
				q = (q - t) / (punyBase - t)
			}
			dst = append(dst, punyDigit(q))
			bias = punyAdapt(delta, h+1, h == basic)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return dst, nil
}

// punyDecode appends the RFC 3492 decoding of input to dst. Digits are
// accepted in either case, as the RFC requires.
func punyDecode(dst []rune, input []byte) ([]rune, error) {
	start := len(dst)
	b := lastIndexByte(input, '-')
	if b < 0 {
		b = 0
	}
	for _, c := range input[:b] {
		if c >= punyInitialN {
			return dst, errors.New("punycode: non-ASCII basic code point")
		}
		dst = append(dst, rune(c))
	}
	in := 0
	if b > 0 {
		in = b + 1
	}
	n, i, bias := punyInitialN, 0, punyInitialBias
	for in < len(input) {
		oldi, w := i, 1
		for k := punyBase; ; k += punyBase {
			if in >= len(input) {
				return dst, errors.New("punycode: truncated input")
			}
			c := input[in]
			in++
			var digit int
			switch {
			case 'a' <= c|0x20 && c|0x20 <= 'z':
				digit = int(c | 0x20 - 'a')
			case '0' <= c && c <= '9':
				digit = int(c-'0') + 26
			default:
				return dst, fmt.Errorf("punycode: invalid digit %q", c)
			}
			if digit > (punyMaxInt-i)/w {
				return dst, errPunyOverflow
			}
			i += digit * w
			t := punyThreshold(k, bias)
			if digit < t {
				break
			}
			if w > punyMaxInt/(punyBase-t) {
				return dst, errPunyOverflow
			}
			w *= punyBase - t
		}
		length := len(dst) - start + 1
		bias = punyAdapt(i-oldi, length, oldi == 0)
		if i/length > punyMaxInt-n {
			return dst, errPunyOverflow
		}
		n += i / length
		i %= length
		if n > unicode.MaxRune || 0xd800 <= n && n <= 0xdfff {
			return dst, fmt.Errorf("punycode: invalid code point %#x", n)
		}
		dst = append(dst, 0)
		copy(dst[start+i+1:], dst[start+i:])
		dst[start+i] = rune(n)
		i++
	}
	return dst, nil
}

// uts46Divergent holds every code point that this package would otherwise
// accept but whose UTS #46 processing (mapping, NFC and validity, with the
// URL Standard's options) gives something other than mapRune: compatibility
// characters that NFKC maps ("ℌ", "ﬁ", "①", halfwidth katakana), full case
// foldings ("ẞ" to "ss", "İ"), scripts folded the other way (Cherokee),
// code points NFC decomposes, and code points UTS #46 disallows or ignores
// (Georgian capitals, variation selectors). Rejecting them keeps Origin
// from producing a host a browser would spell differently.
//
// It was generated for Unicode 15.0, the version of this Go release's
// unicode tables, by comparing Origin("http://"+c+".example") for every
// code point c (after "ŋ" for combining marks) with ToASCII of
// golang.org/x/text/internal/export/idna (tables15.0.0.go) under the URL
// Standard's options, treating a forbidden host code point in its output
// as an error; every code point Origin accepted and the two disagreed on is
// listed. Regenerate it that way when unicode.Version changes; the
// TestOriginUTS46TableVersion test fails to remind whoever bumps Go.
var uts46Divergent = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00a8, 0x00a8, 1}, {0x00aa, 0x00aa, 1}, {0x00af, 0x00af, 1}, {0x00b2, 0x00b5, 1},
		{0x00b8, 0x00ba, 1}, {0x00bc, 0x00be, 1}, {0x0130, 0x0130, 1}, {0x0132, 0x0133, 1},
		{0x013f, 0x0140, 1}, {0x0149, 0x0149, 1}, {0x017f, 0x017f, 1}, {0x01c4, 0x01cc, 1},
		{0x01f1, 0x01f3, 1}, {0x02b0, 0x02b8, 1}, {0x02d8, 0x02dd, 1}, {0x02e0, 0x02e4, 1},
		{0x0340, 0x0341, 1}, {0x0343, 0x0345, 1}, {0x034f, 0x034f, 1}, {0x0374, 0x0374, 1},
		{0x037a, 0x037a, 1}, {0x037e, 0x037e, 1}, {0x0384, 0x0385, 1}, {0x0387, 0x0387, 1},
		{0x03d0, 0x03d6, 1}, {0x03f0, 0x03f2, 1}, {0x03f5, 0x03f5, 1}, {0x03f9, 0x0587, 199},
		{0x0675, 0x0678, 1}, {0x0958, 0x095f, 1}, {0x09dc, 0x09dd, 1}, {0x09df, 0x09df, 1},
		{0x0a33, 0x0a33, 1}, {0x0a36, 0x0a36, 1}, {0x0a59, 0x0a5b, 1}, {0x0a5e, 0x0a5e, 1},
		{0x0b5c, 0x0b5d, 1}, {0x0e33, 0x0e33, 1}, {0x0eb3, 0x0eb3, 1}, {0x0edc, 0x0edd, 1},
		{0x0f0c, 0x0f0c, 1}, {0x0f43, 0x0f43, 1}, {0x0f4d, 0x0f5c, 5}, {0x0f69, 0x0f69, 1},
		{0x0f73, 0x0f73, 1}, {0x0f75, 0x0f79, 1}, {0x0f81, 0x0f81, 1}, {0x0f93, 0x0f93, 1},
		{0x0f9d, 0x0fac, 5}, {0x0fb9, 0x0fb9, 1}, {0x10a0, 0x10c5, 1}, {0x10fc, 0x10fc, 1},
		{0x115f, 0x1160, 1}, {0x13a0, 0x13f5, 1}, {0x13f8, 0x13fd, 1}, {0x17b4, 0x17b5, 1},
		{0x1806, 0x1806, 1}, {0x180b, 0x180d, 1}, {0x180f, 0x180f, 1}, {0x1c80, 0x1c88, 1},
		{0x1d2c, 0x1d2e, 1}, {0x1d30, 0x1d3a, 1}, {0x1d3c, 0x1d4d, 1}, {0x1d4f, 0x1d6a, 1},
		{0x1d78, 0x1d78, 1}, {0x1d9b, 0x1dbf, 1}, {0x1e9a, 0x1e9b, 1}, {0x1e9e, 0x1e9e, 1},
		{0x1f71, 0x1f7d, 2}, {0x1f80, 0x1faf, 1}, {0x1fb2, 0x1fb4, 1}, {0x1fb7, 0x1fb7, 1},
		{0x1fbb, 0x1fc4, 1}, {0x1fc7, 0x1fcb, 2}, {0x1fcc, 0x1fcf, 1}, {0x1fd3, 0x1fd3, 1},
		{0x1fdb, 0x1fdb, 1}, {0x1fdd, 0x1fdf, 1}, {0x1fe3, 0x1fe3, 1}, {0x1feb, 0x1feb, 1},
		{0x1fed, 0x1fef, 1}, {0x1ff2, 0x1ff4, 1}, {0x1ff7, 0x1ffb, 2}, {0x1ffc, 0x1ffe, 1},
		{0x2011, 0x2011, 1}, {0x2017, 0x2017, 1}, {0x2024, 0x2026, 1}, {0x2033, 0x2034, 1},
		{0x2036, 0x2037, 1}, {0x203c, 0x203c, 1}, {0x203e, 0x203e, 1}, {0x2047, 0x2049, 1},
		{0x2057, 0x2057, 1}, {0x2070, 0x2071, 1}, {0x2074, 0x208e, 1}, {0x2090, 0x209c, 1},
		{0x20a8, 0x20a8, 1}, {0x2100, 0x2103, 1}, {0x2105, 0x2107, 1}, {0x2109, 0x2113, 1},
		{0x2115, 0x2116, 1}, {0x2119, 0x211d, 1}, {0x2120, 0x2122, 1}, {0x2124, 0x212c, 4},
		{0x212d, 0x212d, 1}, {0x212f, 0x2139, 1}, {0x213b, 0x2140, 1}, {0x2145, 0x2149, 1},
		{0x2150, 0x217f, 1}, {0x2183, 0x2183, 1}, {0x2189, 0x2189, 1}, {0x222c, 0x222d, 1},
		{0x222f, 0x2230, 1}, {0x2329, 0x232a, 1}, {0x2460, 0x24ea, 1}, {0x2a0c, 0x2a0c, 1},
		{0x2a74, 0x2a76, 1}, {0x2adc, 0x2adc, 1}, {0x2c7c, 0x2c7d, 1}, {0x2d6f, 0x2d6f, 1},
		{0x2e9f, 0x2e9f, 1}, {0x2ef3, 0x2ef3, 1}, {0x2f00, 0x2fd5, 1}, {0x2ff0, 0x2ffb, 1},
		{0x3036, 0x3036, 1}, {0x3038, 0x303a, 1}, {0x309b, 0x309c, 1}, {0x309f, 0x309f, 1},
		{0x30ff, 0x30ff, 1}, {0x3131, 0x318e, 1}, {0x3192, 0x319f, 1}, {0x3200, 0x321e, 1},
		{0x3220, 0x3247, 1}, {0x3250, 0x327e, 1}, {0x3280, 0x33ff, 1}, {0xa69c, 0xa69d, 1},
		{0xa770, 0xa770, 1}, {0xa7f2, 0xa7f4, 1}, {0xa7f8, 0xa7f9, 1}, {0xab5c, 0xab5f, 1},
		{0xab69, 0xab69, 1}, {0xab70, 0xabbf, 1}, {0xf900, 0xfa0d, 1}, {0xfa10, 0xfa10, 1},
		{0xfa12, 0xfa12, 1}, {0xfa15, 0xfa1e, 1}, {0xfa20, 0xfa20, 1}, {0xfa22, 0xfa22, 1},
		{0xfa25, 0xfa26, 1}, {0xfa2a, 0xfa6d, 1}, {0xfa70, 0xfad9, 1}, {0xfb00, 0xfb06, 1},
		{0xfb13, 0xfb17, 1}, {0xfb1d, 0xfb1d, 1}, {0xfb1f, 0xfb28, 1}, {0xfb2a, 0xfb36, 1},
		{0xfb38, 0xfb3c, 1}, {0xfb3e, 0xfb3e, 1}, {0xfb40, 0xfb41, 1}, {0xfb43, 0xfb44, 1},
		{0xfb46, 0xfbb1, 1}, {0xfbd3, 0xfd3d, 1}, {0xfd50, 0xfd8f, 1}, {0xfd92, 0xfdc7, 1},
		{0xfdf0, 0xfdfb, 1}, {0xfe00, 0xfe19, 1}, {0xfe30, 0xfe44, 1}, {0xfe47, 0xfe52, 1},
		{0xfe54, 0xfe66, 1}, {0xfe68, 0xfe6b, 1}, {0xfe70, 0xfe72, 1}, {0xfe74, 0xfe74, 1},
		{0xfe76, 0xfefc, 1}, {0xff5f, 0xff60, 1}, {0xff62, 0xffbe, 1}, {0xffc2, 0xffc7, 1},
		{0xffca, 0xffcf, 1}, {0xffd2, 0xffd7, 1}, {0xffda, 0xffdc, 1}, {0xffe0, 0xffe6, 1},
		{0xffe8, 0xffee, 1}, {0xfffc, 0xfffc, 1},
	},
	R32: []unicode.Range32{
		{0x10781, 0x10785, 1}, {0x10787, 0x107b0, 1}, {0x107b2, 0x107ba, 1},
		{0x1d15e, 0x1d164, 1}, {0x1d1bb, 0x1d1c0, 1}, {0x1d400, 0x1d454, 1},
		{0x1d456, 0x1d49c, 1}, {0x1d49e, 0x1d49f, 1}, {0x1d4a2, 0x1d4a2, 1},
		{0x1d4a5, 0x1d4a6, 1}, {0x1d4a9, 0x1d4ac, 1}, {0x1d4ae, 0x1d4b9, 1},
		{0x1d4bb, 0x1d4bb, 1}, {0x1d4bd, 0x1d4c3, 1}, {0x1d4c5, 0x1d505, 1},
		{0x1d507, 0x1d50a, 1}, {0x1d50d, 0x1d514, 1}, {0x1d516, 0x1d51c, 1},
		{0x1d51e, 0x1d539, 1}, {0x1d53b, 0x1d53e, 1}, {0x1d540, 0x1d544, 1},
		{0x1d546, 0x1d546, 1}, {0x1d54a, 0x1d550, 1}, {0x1d552, 0x1d6a5, 1},
		{0x1d6a8, 0x1d7cb, 1}, {0x1d7ce, 0x1d7ff, 1}, {0x1e030, 0x1e06d, 1},
		{0x1ee00, 0x1ee03, 1}, {0x1ee05, 0x1ee1f, 1}, {0x1ee21, 0x1ee22, 1},
		{0x1ee24, 0x1ee24, 1}, {0x1ee27, 0x1ee27, 1}, {0x1ee29, 0x1ee32, 1},
		{0x1ee34, 0x1ee37, 1}, {0x1ee39, 0x1ee39, 1}, {0x1ee3b, 0x1ee3b, 1},
		{0x1ee42, 0x1ee42, 1}, {0x1ee47, 0x1ee4d, 2}, {0x1ee4e, 0x1ee4f, 1},
		{0x1ee51, 0x1ee52, 1}, {0x1ee54, 0x1ee54, 1}, {0x1ee57, 0x1ee61, 2},
		{0x1ee62, 0x1ee62, 1}, {0x1ee64, 0x1ee64, 1}, {0x1ee67, 0x1ee6a, 1},
		{0x1ee6c, 0x1ee72, 1}, {0x1ee74, 0x1ee77, 1}, {0x1ee79, 0x1ee7c, 1},
		{0x1ee7e, 0x1ee7e, 1}, {0x1ee80, 0x1ee89, 1}, {0x1ee8b, 0x1ee9b, 1},
		{0x1eea1, 0x1eea3, 1}, {0x1eea5, 0x1eea9, 1}, {0x1eeab, 0x1eebb, 1},
		{0x1f100, 0x1f10a, 1}, {0x1f110, 0x1f12e, 1}, {0x1f130, 0x1f14f, 1},
		{0x1f16a, 0x1f16c, 1}, {0x1f190, 0x1f190, 1}, {0x1f200, 0x1f202, 1},
		{0x1f210, 0x1f23b, 1}, {0x1f240, 0x1f248, 1}, {0x1f250, 0x1f251, 1},
		{0x1fbf0, 0x1fbf9, 1}, {0x2f800, 0x2fa1d, 1}, {0xe0100, 0xe01ef, 1},
	},
	LatinOffset: 6,
}
