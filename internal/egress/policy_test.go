package egress

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"
)

// addressRow is one row of testdata/addresses.json.
type addressRow struct {
	Addr  string `json:"addr"`
	Class string `json:"class"`
	Why   string `json:"why"`
}

func loadAddresses(t *testing.T) []addressRow {
	t.Helper()
	raw, err := os.ReadFile("testdata/addresses.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Rows []addressRow `json:"rows"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) == 0 {
		t.Fatal("testdata/addresses.json has no rows")
	}
	return table.Rows
}

var classNames = map[string]class{"public": public, "loopback": loopback, "private": private, "never": never}

// TestAddressPolicy checks every row of the table under the four
// combinations of options, through the dialer's Control hook (which is
// where the policy runs, after resolution and before connect): nothing is
// ever dialled.
func TestAddressPolicy(t *testing.T) {
	for _, row := range loadAddresses(t) {
		want, ok := classNames[row.Class]
		if !ok {
			t.Fatalf("%s: unknown class %q", row.Addr, row.Class)
		}
		a := netip.MustParseAddr(row.Addr)
		if got, what := classify(a); got != want {
			t.Errorf("classify(%s) = %d (%s), want %s (%s)", row.Addr, got, what, row.Class, row.Why)
		}
		for _, p := range []policy{{}, {allowLoopback: true}, {allowPrivate: true}, {allowLoopback: true, allowPrivate: true}} {
			allowed := want == public || want == loopback && p.allowLoopback || want == private && p.allowPrivate
			network := "tcp4"
			if a.Is6() {
				network = "tcp6"
			}
			err := p.control(context.Background(), network, netip.AddrPortFrom(a, 443).String(), nil)
			if allowed != (err == nil) {
				t.Errorf("%+v: control(%s) = %v, want allowed %v (%s)", p, row.Addr, err, allowed, row.Why)
			}
			if err != nil && (!errors.Is(err, Denied) || !strings.Contains(err.Error(), a.String())) {
				t.Errorf("%+v: control(%s) = %v, want a Denied error naming the address", p, row.Addr, err)
			}
		}
	}
}

// TestDeniedSaysWhatWouldAllow: a refusal names the option that lifts
// it, and an address always refused names none.
func TestDeniedSaysWhatWouldAllow(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1", "127.0.0.1 is a loopback address, refused unless the host allows loopback"},
		{"10.0.0.1", "10.0.0.1 is a private address, refused unless the host allows private addresses"},
		{"169.254.1.1", "169.254.1.1 is a link-local address (where cloud metadata lives)"},
		{"169.254.169.254", "169.254.169.254 is the metadata address of AWS, GCP, Azure, OCI, OpenStack and others"},
		{"64:ff9b::a9fe:101", "64:ff9b::a9fe:101 is a link-local address (where cloud metadata lives), through 169.254.1.1"},
		{"fd20:ce::254", "fd20:ce::254 is the IPv6 metadata address of GCP"},
		{"64:ff9b:1::a9fe:a9fe", "64:ff9b:1::a9fe:a9fe is the metadata address of AWS, GCP, Azure, OCI, OpenStack and others, through 169.254.169.254 (local NAT64)"},
		{"::ffff:100.100.100.200", "::ffff:100.100.100.200 is the metadata address of Alibaba Cloud"},
	} {
		err := policy{}.allows(netip.MustParseAddr(tc.addr))
		var e *Error
		if !errors.As(err, &e) || e.Err.Error() != tc.want {
			t.Errorf("allows(%s) = %v, want cause %q", tc.addr, err, tc.want)
		}
	}
}

// TestControlRefusesWhatIsNotAnAddress: the hook fails closed on an
// address it cannot read, and on the zero address.
func TestControlRefusesWhatIsNotAnAddress(t *testing.T) {
	open := policy{allowLoopback: true, allowPrivate: true}
	for _, address := range []string{"localhost:80", "127.0.0.1", "", "[::1]"} {
		if err := open.control(context.Background(), "tcp", address, nil); !errors.Is(err, Denied) {
			t.Errorf("control(%q) = %v, want Denied", address, err)
		}
	}
	if c, _ := classify(netip.Addr{}); c != never {
		t.Errorf("classify(zero Addr) = %d, want never", c)
	}
}

// TestMappedAgreesWithUnmapped is the property behind unwrapping: every
// IPv4 address and its IPv4-mapped IPv6 form get one verdict.
func TestMappedAgreesWithUnmapped(t *testing.T) {
	for i := uint32(0); i < 1<<16; i++ {
		v := i*65521 + i>>3 // spread over the whole IPv4 space
		b := [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		a := netip.AddrFrom4(b)
		m := netip.AddrFrom16(a.As16())
		ca, _ := classify(a)
		cm, _ := classify(m)
		if ca != cm {
			t.Fatalf("classify(%s) = %d but classify(%s) = %d", a, ca, m, cm)
		}
	}
}
