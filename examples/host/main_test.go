package main

import (
	"errors"
	"flag"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopneg/wopneg/facets"
)

// TestParseFlags reads the command line as the usage says: a self-test
// picks a free port unless -port names one.
func TestParseFlags(t *testing.T) {
	cases := []struct {
		args     []string
		addr     string
		selftest bool
		want     config // Token, PG, SharedKeys, Seams, AuditWait and GRPCAddr
	}{
		{nil, "127.0.0.1:8080", false, config{Token: "demo", AuditWait: time.Second}},
		{[]string{"-selftest"}, "127.0.0.1:0", true, config{Token: "demo", AuditWait: time.Second}},
		{[]string{"-selftest", "-port", "9000"}, "127.0.0.1:9000", true, config{Token: "demo", AuditWait: time.Second}},
		{[]string{"-port", "9000", "-selftest"}, "127.0.0.1:9000", true, config{Token: "demo", AuditWait: time.Second}},
		{[]string{"-port", "0"}, "127.0.0.1:0", false, config{Token: "demo", AuditWait: time.Second}},
		{[]string{"-token", "", "-seams", "-pg", "postgres://db", "-keys", "k1:s", "-audit-wait", "0"}, "127.0.0.1:8080", false,
			config{PG: "postgres://db", SharedKeys: "k1:s", Seams: true}},
		{[]string{"-audit-wait", "250ms"}, "127.0.0.1:8080", false, config{Token: "demo", AuditWait: 250 * time.Millisecond}},
		{[]string{"-grpc-port", "0"}, "127.0.0.1:8080", false, config{Token: "demo", AuditWait: time.Second, GRPCAddr: "127.0.0.1:0"}},
	}
	for _, c := range cases {
		cfg, selftest, err := parseFlags(c.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if cfg.Addr != c.addr || selftest != c.selftest {
			t.Errorf("%q: listens on %s, selftest %v; want %s, %v", c.args, cfg.Addr, selftest, c.addr, c.selftest)
		}
		got := config{Token: cfg.Token, PG: cfg.PG, SharedKeys: cfg.SharedKeys, Seams: cfg.Seams, AuditWait: cfg.AuditWait, GRPCAddr: cfg.GRPCAddr}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %+v, want %+v", c.args, got, c.want)
		}
		if !reflect.DeepEqual(cfg.Facets, defaultFacets()) {
			t.Errorf("%q: advertises %+v, want the default facets", c.args, cfg.Facets)
		}
	}
	if _, _, err := parseFlags([]string{"-bogus"}, io.Discard); err == nil {
		t.Error("an unknown flag was accepted")
	}
	if _, _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

// TestA2ACardListsEveryVersion: the card has one interface per advertised
// version, preferred first, all at the JSON-RPC URL, whatever the facet
// holds (the example host advertises 1.0 alone).
func TestA2ACardListsEveryVersion(t *testing.T) {
	adv := facets.Advertised{Protocol: facets.ProtocolA2A, Versions: []string{"0.3", "1.0", "1.1"}, Preferred: "1.0", Floor: "0.3"}
	card := a2aCard("http://127.0.0.1:1", adv)
	var got []string
	for _, iface := range card.SupportedInterfaces {
		got = append(got, string(iface.ProtocolVersion))
		if iface.URL != "http://127.0.0.1:1"+a2aPath || iface.ProtocolBinding != a2a.TransportProtocolJSONRPC {
			t.Errorf("interface %+v, want JSON-RPC at %s", iface, "http://127.0.0.1:1"+a2aPath)
		}
	}
	if want := []string{"1.0", "0.3", "1.1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("card versions %q, want %q", got, want)
	}
}
