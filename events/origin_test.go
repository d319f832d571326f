package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// originCase is one row of testdata/origins.json. The table is data so that
// the fuzz target can seed from the same URLs.
type originCase struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	Origin string `json:"origin"`
	Error  bool   `json:"error"`
}

func loadOriginCases(tb testing.TB) []originCase {
	tb.Helper()
	data, err := os.ReadFile("testdata/origins.json")
	if err != nil {
		tb.Fatal(err)
	}
	var cases []originCase
	if err := json.Unmarshal(data, &cases); err != nil {
		tb.Fatalf("testdata/origins.json: %v", err)
	}
	if len(cases) < 45 {
		tb.Fatalf("testdata/origins.json has %d rows, want at least 45", len(cases))
	}
	return cases
}

var originDigestRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// originTestDigest is the digest computed independently of the code under
// test, from the expected origin.
func originTestDigest(origin string) string {
	sum := sha256.Sum256([]byte(origin))
	return hex.EncodeToString(sum[:])
}

func TestOriginTable(t *testing.T) {
	seen := make(map[string]bool)
	for _, tc := range loadOriginCases(t) {
		if seen[tc.Name] {
			t.Errorf("duplicate row name %q", tc.Name)
		}
		seen[tc.Name] = true
		t.Run(tc.Name, func(t *testing.T) {
			got, err := Origin(tc.URL)
			if tc.Error {
				if err == nil {
					t.Fatalf("Origin(%q) = %q, want an error", tc.URL, got)
				}
				checkOriginError(t, tc.URL, got, err)
				return
			}
			if err != nil {
				t.Fatalf("Origin(%q): %v", tc.URL, err)
			}
			if got != tc.Origin {
				t.Fatalf("Origin(%q) = %q, want %q", tc.URL, got, tc.Origin)
			}
			if again, err := Origin(got); err != nil || again != got {
				t.Errorf("Origin(%q) = %q, %v; want it unchanged", got, again, err)
			}
			digest, err := PeerDigest(tc.URL)
			if err != nil {
				t.Fatalf("PeerDigest(%q): %v", tc.URL, err)
			}
			if !originDigestRE.MatchString(digest) {
				t.Errorf("PeerDigest(%q) = %q, want 64 lowercase hex digits", tc.URL, digest)
			}
			if want := originTestDigest(tc.Origin); digest != want {
				t.Errorf("PeerDigest(%q) = %s, want sha256(%q) = %s", tc.URL, digest, tc.Origin, want)
			}
		})
	}
}

// checkOriginError asserts the error contract shared by every function.
func checkOriginError(t *testing.T, rawURL, got string, err error) {
	t.Helper()
	if got != "" {
		t.Errorf("Origin(%q) returned %q alongside its error", rawURL, got)
	}
	if !errors.Is(err, ErrNoOrigin) {
		t.Errorf("Origin(%q) error %v does not wrap ErrNoOrigin", rawURL, err)
	}
	var oe *OriginError
	if !errors.As(err, &oe) || oe.Reason == "" {
		t.Errorf("Origin(%q) error %#v is not an *OriginError with a reason", rawURL, err)
	}
	if !strings.HasPrefix(err.Error(), "events: peer URL ") {
		t.Errorf("Origin(%q) error %q does not say which URL", rawURL, err)
	}
	digest, derr := PeerDigest(rawURL)
	if derr == nil || digest != "" {
		t.Errorf("PeerDigest(%q) = %q, %v; want no digest and an error", rawURL, digest, derr)
	}
	if !errors.Is(derr, ErrNoOrigin) {
		t.Errorf("PeerDigest(%q) error %v does not wrap ErrNoOrigin", rawURL, derr)
	}
	dst, aerr := AppendPeerDigest([]byte("keep"), rawURL)
	if aerr == nil || string(dst) != "keep" {
		t.Errorf("AppendPeerDigest(%q) = %q, %v; want dst unchanged and an error", rawURL, dst, aerr)
	}
}

func TestOriginDropsOnlyTheSchemesDefaultPort(t *testing.T) {
	for _, tc := range []struct {
		scheme       string
		defaultPort  string
		otherDefault string
	}{
		{"http", "80", "443"},
		{"ws", "80", "443"},
		{"https", "443", "80"},
		{"wss", "443", "80"},
	} {
		url := tc.scheme + "://peer.example:" + tc.defaultPort + "/p"
		if got, err := Origin(url); err != nil || got != tc.scheme+"://peer.example" {
			t.Errorf("Origin(%q) = %q, %v; want the default port dropped", url, got, err)
		}
		url = tc.scheme + "://peer.example:" + tc.otherDefault + "/p"
		if got, err := Origin(url); err != nil || got != tc.scheme+"://peer.example:"+tc.otherDefault {
			t.Errorf("Origin(%q) = %q, %v; want the port kept", url, got, err)
		}
		// The digest must not tell the spelled-out default from its absence.
		a, errA := PeerDigest(tc.scheme + "://peer.example:" + tc.defaultPort)
		b, errB := PeerDigest(tc.scheme + "://peer.example")
		if errA != nil || errB != nil || a != b {
			t.Errorf("%s: digest with default port %q (%v) != without %q (%v)", tc.scheme, a, errA, b, errB)
		}
	}
}

func TestOriginLowercasesSchemeAndHost(t *testing.T) {
	got, err := Origin("HTTPS://PEER.EXAMPLE:8443/PATH")
	if err != nil || got != "https://peer.example:8443" {
		t.Fatalf("Origin = %q, %v; want %q", got, err, "https://peer.example:8443")
	}
	upper, err1 := PeerDigest("HTTPS://PEER.EXAMPLE/")
	lower, err2 := PeerDigest("https://peer.example/")
	if err1 != nil || err2 != nil || upper != lower {
		t.Errorf("case changed the digest: %q (%v) vs %q (%v)", upper, err1, lower, err2)
	}
}

func TestOriginIPv6IsBracketedAndCompressed(t *testing.T) {
	for _, url := range []string{
		"http://[0:0:0:0:0:0:0:1]:8080/",
		"http://[0000:0000:0000:0000:0000:0000:0000:0001]:8080",
		"http://[::1]:8080",
		"HTTP://[::0:1]:8080",
	} {
		got, err := Origin(url)
		if err != nil || got != "http://[::1]:8080" {
			t.Errorf("Origin(%q) = %q, %v; want %q", url, got, err, "http://[::1]:8080")
		}
	}
	got, err := Origin("https://[2001:DB8::A]/")
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(got, "https://")
	if !strings.HasPrefix(host, "[") || !strings.HasSuffix(host, "]") || host != "[2001:db8::a]" {
		t.Errorf("IPv6 host = %q, want [2001:db8::a]", host)
	}
}

func TestOriginRejectsSchemesWithoutOrigin(t *testing.T) {
	for _, url := range []string{
		"ftp://peer.example/",
		"file:///etc/passwd",
		"mailto:peer@peer.example",
		"data:text/html,<p>hi",
		"blob:https://peer.example/uuid",
		"about:blank",
		"ws+unix://peer.example",
		"httpx://peer.example",
		"peer.example",
		"/relative/path",
		"",
	} {
		got, err := Origin(url)
		if err == nil {
			t.Errorf("Origin(%q) = %q, want an error", url, got)
			continue
		}
		checkOriginError(t, url, got, err)
	}
}

func TestOriginErrorMessagesNameTheProblem(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"ftp://x", `events: peer URL "ftp://x": scheme "ftp" has no origin (want http, https, ws or wss)`},
		{"FTP://x", `scheme "ftp" has no origin`},
		{"peer.example", "no scheme"},
		{"https://", "missing host"},
		{"http://a:99999", `port "99999" is out of range`},
		{"http://a:x", `port "x" is not a decimal number`},
		{"http://[::1", "no closing ']'"},
		{"http://[fe80::1%25eth0]", `IPv6 zone "%25eth0"`},
		{"http://exa mple.com", "forbidden code point U+0020"},
		{"https://a%2Fb.example", "forbidden code point U+002F"},
		{"http://peer.1", "ends in a number"},
		{"http://a..b", "empty label"},
		{"http://xn--a.example", "not valid Punycode"},
	} {
		_, err := Origin(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Origin(%q) error = %v, want it to contain %q", tc.url, err, tc.want)
		}
	}
}

func TestOriginErrorRedactsPassword(t *testing.T) {
	_, err := Origin("ftp://alice:hunter2@peer.example/")
	if err == nil {
		t.Fatal("no error for ftp")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %q leaks the password", err)
	}
	var oe *OriginError
	if !errors.As(err, &oe) || oe.URL != "ftp://alice:xxxxx@peer.example/" {
		t.Errorf("error URL = %q, want the password replaced", oe.URL)
	}
}

func TestOriginBidiRule(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://שלום.example", "http://xn--9dbne9b.example"},
		{"http://EXAMPLE.xn--9dbne9b", "http://example.xn--9dbne9b"},
		{"http://ש1.example", "http://xn--1-fjc.example"},
		{"http://א١.example", "http://xn--4db40a.example"},
	} {
		if got, err := Origin(tc.url); err != nil || got != tc.want {
			t.Errorf("Origin(%q) = %q, %v; want %q", tc.url, got, err, tc.want)
		}
	}
	for _, url := range []string{
		"http://aשb.example",     // left-to-right letters in a right-to-left label
		"http://שa.example",      // right-to-left label ending in a left-to-right letter
		"http://1a.שלום.example", // left-to-right label starting with a digit in a bidi domain
		"http://1שלום.example",   // right-to-left label starting with a digit
		"http://ש1١.example",     // European and Arabic-Indic digits mixed
		"http://a.xn--a-zhc",     // "xn--a-zhc" is "אa", checked once decoded
	} {
		if got, err := Origin(url); err == nil || !strings.Contains(err.Error(), "bidi rule") {
			t.Errorf("Origin(%q) = %q, %v; want a bidi rule error", url, got, err)
		}
	}
}

func TestOriginRejectsMappingsItDoesNotImplement(t *testing.T) {
	// Each of these has a UTS #46 mapping other than lowercasing (or is
	// disallowed); a browser would spell the host differently.
	for _, host := range []string{"ℌ", "ﬁ", "ẞ", "İ", "①", "ｶ", "Ⴀ", "Ꭰ", "ꭰ", "ſ", "a\ufe0f"} {
		url := "http://" + host + ".example"
		if got, err := Origin(url); err == nil {
			t.Errorf("Origin(%q) = %q, want an error", url, got)
		}
	}
	// Their lowercase or NFKC forms are fine.
	for _, tc := range []struct{ host, want string }{
		{"ß", "xn--zca"},
		{"Ω", "xn--bya"},
		{"\u212a", "k"}, // KELVIN SIGN lowercases to ASCII k, as UTS #46 maps it
	} {
		got, err := Origin("http://" + tc.host + ".example")
		if want := "http://" + tc.want + ".example"; err != nil || got != want {
			t.Errorf("Origin(http://%s.example) = %q, %v; want %q", tc.host, got, err, want)
		}
	}
}

func TestOriginChecksPunycodeLabels(t *testing.T) {
	for _, url := range []string{
		"http://xn--bcher-kva.example",
		"http://XN--BCHER-KVA.example",
		"http://xn--zca.example",
	} {
		if _, err := Origin(url); err != nil {
			t.Errorf("Origin(%q): %v", url, err)
		}
	}
	for _, url := range []string{
		"http://xn--.example",           // empty
		"http://xn--a.example",          // truncated
		"http://xn--abc-.example",       // all ASCII
		"http://xn---4ca.example",       // '-' read as a digit
		"http://xn--bcher-kva-.example", // decodes to ASCII
	} {
		if got, err := Origin(url); err == nil {
			t.Errorf("Origin(%q) = %q, want an error", url, got)
		}
	}
	// An xn-- label must be how this package would encode what it decodes
	// to: a capital letter is encoded lowercased.
	capital, err := punyEncode(nil, []rune("Ü"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Origin("http://xn--" + string(capital) + ".example"); err == nil {
		t.Errorf("Origin of the Punycode of Ü = %q, want an error", got)
	}
}

func TestOriginUTS46TableVersion(t *testing.T) {
	// uts46Divergent lists what unicode.ToLower gets wrong for one Unicode
	// version; code points a newer version assigns would be accepted
	// unchecked. See its comment for how to regenerate it.
	if unicode.Version != "15.0.0" {
		t.Errorf("unicode.Version is %s: regenerate uts46Divergent for it and update this test", unicode.Version)
	}
}

func TestOriginHostLengthLimits(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	host253 := strings.Join([]string{label63, label63, label63, strings.Repeat("b", 61)}, ".")
	if len(host253) != 253 {
		t.Fatalf("test bug: host is %d octets", len(host253))
	}
	for _, host := range []string{label63, host253, host253 + "."} {
		if got, err := Origin("http://" + host + "/"); err != nil || got != "http://"+host {
			t.Errorf("Origin(http://%s) = %q, %v; want it accepted", host, got, err)
		}
	}
	for _, host := range []string{label63 + "a", host253 + "b", "x" + host253} {
		if got, err := Origin("http://" + host); err == nil {
			t.Errorf("Origin(http://%s) = %q, want a length error", host, got)
		}
	}
	// n ü encode to "xn--tda" and n-1 more digits: 57 just fit, 58 do not.
	for n, ok := range map[int]bool{1: true, 57: true, 58: false} {
		url := "https://" + strings.Repeat("ü", n) + ".example"
		got, err := Origin(url)
		if (err == nil) != ok {
			t.Errorf("Origin of %d ü: %q, %v; want ok=%v", n, got, err, ok)
		}
		if ok && len(strings.TrimSuffix(strings.TrimPrefix(got, "https://"), ".example")) > 63 {
			t.Errorf("Origin of %d ü: label %q over 63 octets", n, got)
		}
	}
}

func TestOriginReturnsInputSubstringWithoutAllocating(t *testing.T) {
	const url = "https://peer.example/a/b?q"
	got, err := Origin(url)
	if err != nil || got != "https://peer.example" {
		t.Fatalf("Origin = %q, %v", got, err)
	}
	// An allocation count is deterministic, unlike a timing: this guards
	// the hot path's contract, not its speed.
	if n := testing.AllocsPerRun(100, func() { _, _ = Origin(url) }); n != 0 {
		t.Errorf("Origin(canonical) allocates %v times, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = PeerDigest(url) }); n > 1 {
		t.Errorf("PeerDigest(canonical) allocates %v times, want at most 1", n)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { _, _ = AppendPeerDigest(buf[:0], url) }); n != 0 {
		t.Errorf("AppendPeerDigest(canonical) allocates %v times, want 0", n)
	}
}

func TestPeerDigestGolden(t *testing.T) {
	// Literal digests, so that a change of what is hashed (a trailing slash,
	// a different hash, upper-case hex) cannot pass by changing both sides.
	for _, tc := range []struct{ url, want string }{
		{"https://peer.example/a/b?q", "3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1"},
		{"HTTPS://user@Peer.Example:443/", "3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1"},
		{"https://Bücher.example/x", "edcf346bca2dce514f29462537e7cfb50b206c547164e91957db04ff75d03607"},
	} {
		if got, err := PeerDigest(tc.url); err != nil || got != tc.want {
			t.Errorf("PeerDigest(%q) = %q, %v; want %q", tc.url, got, err, tc.want)
		}
	}
}

func TestAppendPeerDigestAppends(t *testing.T) {
	got, err := AppendPeerDigest([]byte("peer="), "wss://peer.example/")
	if err != nil {
		t.Fatal(err)
	}
	if want := "peer=" + originTestDigest("wss://peer.example"); string(got) != want {
		t.Errorf("AppendPeerDigest = %q, want %q", got, want)
	}
}

func TestOriginMapRuneIsIdempotent(t *testing.T) {
	// Origin(Origin(u)) == Origin(u) for IDNA hosts needs the mapping of a
	// mapped code point to be itself; check every code point, not a sample.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		m := mapRune(r)
		if mm := mapRune(m); mm != m {
			t.Fatalf("mapRune(%U) = %U but mapRune(%U) = %U", r, m, m, mm)
		}
		if r >= 0xff01 && r <= 0xff5e && m >= utf8.RuneSelf {
			t.Fatalf("fullwidth %U maps to non-ASCII %U", r, m)
		}
	}
}

// punycodeRFC3492 are the samples of RFC 3492 §7.1 (with errata 3026 and
// the mixed-case annotation of (I) dropped, since this encoder emits
// lowercase digits only).
var punycodeRFC3492 = []struct{ name, unicode, ascii string }{
	{"(A) Arabic (Egyptian)", "\u0644\u064A\u0647\u0645\u0627\u0628\u062A\u0643\u0644\u0645\u0648\u0634\u0639\u0631\u0628\u064A\u061F", "egbpdaj6bu4bxfgehfvwxn"},
	{"(B) Chinese (simplified)", "他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"},
	{"(C) Chinese (traditional)", "\u4ED6\u5011\u7232\u4EC0\u9EBD\u4E0D\u8AAA\u4E2D\u6587", "ihqwctvzc91f659drss3x8bo0yb"},
	{"(D) Czech", "Pro\u010Dprost\u011Bnemluv\u00ED\u010Desky", "Proprostnemluvesky-uyb24dma41a"},
	{"(E) Hebrew", "\u05DC\u05DE\u05D4\u05D4\u05DD\u05E4\u05E9\u05D5\u05D8\u05DC\u05D0\u05DE\u05D3\u05D1\u05E8\u05D9\u05DD\u05E2\u05D1\u05E8\u05D9\u05EA", "4dbcagdahymbxekheh6e0a7fei0b"},
	{"(G) Japanese", "\u306A\u305C\u307F\u3093\u306A\u65E5\u672C\u8A9E\u3092\u8A71\u3057\u3066\u304F\u308C\u306A\u3044\u306E\u304B", "n8jok5ay5dzabd5bym9f0cm5685rrjetr6pdxa"},
	{"(I) Russian", "\u043F\u043E\u0447\u0435\u043C\u0443\u0436\u0435\u043E\u043D\u0438\u043D\u0435\u0433\u043E\u0432\u043E\u0440\u044F\u0442\u043F\u043E\u0440\u0443\u0441\u0441\u043A\u0438", "b1abfaaepdrnnbgefbadotcwatmq2g4l"},
	{"(J) Spanish", "Porqu\u00E9nopuedensimplementehablarenEspa\u00F1ol", "PorqunopuedensimplementehablarenEspaol-fmd56a"},
	{"(K) Vietnamese", "T\u1EA1isaoh\u1ECDkh\u00F4ngth\u1EC3ch\u1EC9n\u00F3iti\u1EBFngVi\u1EC7t", "TisaohkhngthchnitingVit-kjcr8268qyxafd2f1b9g"},
	{"(L) 3年B組金八先生", "3年B組金八先生", "3B-ww4c5e180e575a65lsy2b"},
	{"(M) 安室奈美恵-with-SUPER-MONKEYS", "安室奈美恵-with-SUPER-MONKEYS", "-with-SUPER-MONKEYS-pc58ag80a8qai00g7n9n"},
	{"(N) Hello-Another-Way-それぞれの場所", "Hello-Another-Way-それぞれの場所", "Hello-Another-Way--fc4qua05auwb3674vfr0b"},
	{"(O) ひとつ屋根の下2", "ひとつ屋根の下2", "2-u9tlzr9756bt3uc0v"},
	{"(P) MajiでKoiする5秒前", "MajiでKoiする5秒前", "MajiKoi5-783gue6qz075azm5e"},
	{"(Q) パフィーdeルンバ", "パフィーdeルンバ", "de-jg4avhby1noc0d"},
	{"(R) そのスピードで", "そのスピードで", "d9juau41awczczp"},
	{"(S) -> $1.00 <-", "-> $1.00 <-", "-> $1.00 <--"},
}

func TestPunycodeRFC3492Samples(t *testing.T) {
	for _, tc := range punycodeRFC3492 {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := punyEncode(nil, []rune(tc.unicode))
			if err != nil || string(enc) != tc.ascii {
				t.Errorf("encode = %q, %v; want %q", enc, err, tc.ascii)
			}
			dec, err := punyDecode(nil, []byte(tc.ascii))
			if err != nil || string(dec) != tc.unicode {
				t.Errorf("decode = %q, %v; want %q", string(dec), err, tc.unicode)
			}
		})
	}
}

func TestPunycodeSmallCases(t *testing.T) {
	for _, tc := range []struct{ unicode, ascii string }{
		{"", ""},
		{"-", "--"},
		{"a", "a-"},
		{"bücher", "bcher-kva"},
		{"ü", "tda"},
		{"äöü", "4ca0bs"},
		{"例え", "r8jz45g"},
		{"テスト", "zckzah"},
		{"\U0001F600", "e28h"},
	} {
		enc, err := punyEncode(nil, []rune(tc.unicode))
		if err != nil || string(enc) != tc.ascii {
			t.Errorf("encode(%q) = %q, %v; want %q", tc.unicode, enc, err, tc.ascii)
		}
		dec, err := punyDecode(nil, []byte(tc.ascii))
		if err != nil || string(dec) != tc.unicode {
			t.Errorf("decode(%q) = %q, %v; want %q", tc.ascii, string(dec), err, tc.unicode)
		}
	}
}

func TestPunycodeDecodeAcceptsUppercaseDigits(t *testing.T) {
	// RFC 3492's own (I) sample carries a mixed-case annotation.
	dec, err := punyDecode(nil, []byte("b1abfaaepdrnnbgefbaDotcwatmq2g4l"))
	if err != nil || string(dec) != punycodeRFC3492[6].unicode {
		t.Errorf("decode = %q, %v; want the Russian sample", string(dec), err)
	}
}

func TestPunycodeDecodeErrors(t *testing.T) {
	for _, in := range []string{
		"-",           // the delimiter alone leaves '-' as a digit
		"foo\x00bar",  // not a base-36 digit
		"foo#bar",     // not a base-36 digit
		"foo\u00a3-x", // non-ASCII basic code point
		"9",           // truncated: "9a" is U+00A3
		"99999a",      // past U+10FFFF
		"9999999999a", // overflows the RFC's 32-bit arithmetic
	} {
		if dec, err := punyDecode(nil, []byte(in)); err == nil {
			t.Errorf("decode(%q) = %q, want an error", in, string(dec))
		}
	}
}

func TestPunycodeEncodeOverflow(t *testing.T) {
	in := slices.Repeat([]rune{'x'}, 65666)
	in = append(in, '\uffff')
	if _, err := punyEncode(nil, in); err == nil {
		t.Error("encode of a 32-bit overflowing input succeeded")
	}
}

func BenchmarkPeerDigest(b *testing.B) {
	for _, bc := range []struct{ name, url string }{
		{"canonical-ascii", "https://peer.example/a/b?q"},
		{"idna", "https://Bücher.example/a/b?q"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PeerDigest(bc.url); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOrigin(b *testing.B) {
	for _, bc := range []struct{ name, url string }{
		{"canonical-ascii", "https://peer.example/a/b?q"},
		{"non-canonical", "HTTPS://user@Peer.Example:443/a"},
		{"idna", "https://Bücher.example/a/b?q"},
		{"ipv6", "http://[0:0:0:0:0:0:0:1]:8080/"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Origin(bc.url); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
