package a2acard_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/wopneg/wopneg/internal/a2acard"
)

// TestOffersOverBinding: the versions of the interfaces of one binding,
// and a 0.3 card's version where it names that binding.
func TestOffersOverBinding(t *testing.T) {
	for _, tc := range []struct {
		name, card, binding string
		want                []string
	}{
		{"every binding", `{"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"protocolVersion":"0.3","protocolBinding":"GRPC"}]}`, "", []string{"1.0", "0.3"}},
		{"GRPC only", `{"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"protocolVersion":"0.3","protocolBinding":"GRPC"}]}`, "GRPC", []string{"0.3"}},
		{"no GRPC interface", `{"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, "GRPC", nil},
		{"binding not a string", `{"supportedInterfaces":[{"protocolBinding":1,"protocolVersion":"1.0"}]}`, "GRPC", nil},
		{"0.3, preferred GRPC", `{"protocolVersion":"0.3.0","preferredTransport":"GRPC"}`, "GRPC", []string{"0.3"}},
		{"0.3, additional GRPC", `{"protocolVersion":"0.3.0","additionalInterfaces":[1,{"transport":"GRPC"}]}`, "GRPC", []string{"0.3"}},
		{"0.3, JSON-RPC only", `{"protocolVersion":"0.3.0","preferredTransport":"JSONRPC","additionalInterfaces":[{"transport":"HTTP+JSON"}]}`, "GRPC", nil},
		{"0.3, every binding", `{"protocolVersion":"0.3.0","additionalInterfaces":"x"}`, "", []string{"0.3"}},
		{"0.3, additional not an array", `{"protocolVersion":"0.3.0","additionalInterfaces":"GRPC"}`, "GRPC", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a2acard.Offers([]byte(tc.card), tc.binding)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Offers = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if _, err := a2acard.Offers([]byte(`{}`), "GRPC"); !errors.Is(err, a2acard.ErrNoVersion) {
		t.Errorf("an object naming no version: %v", err)
	}
	if _, err := a2acard.Offers([]byte(`{"additionalInterfaces":[{"transport":1}],"protocolVersion":"0.3"}`), "GRPC"); err != nil {
		t.Errorf("a transport that is no string: %v", err)
	}
}

// TestMajorMinor: digits 0 to 9 around one dot, nothing beside them ('/'
// and ':' border the digits), and nothing after a card.
func TestMajorMinor(t *testing.T) {
	for s, want := range map[string]bool{"1.0": true, "0.9": true, "10.10": true, "": false, "1.": false, ".1": false, "1./": false, "1.:": false, "/.0": false, "1.0.1": false} {
		if got := a2acard.MajorMinor(s); got != want {
			t.Errorf("MajorMinor(%q) = %t", s, got)
		}
	}
	if _, err := a2acard.Offers([]byte(`{"protocolVersion":"0.3"} {}`), ""); err == nil {
		t.Errorf("a card with something after it: no error")
	}
}
