package events_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
)

// A downgrade is recorded as accepted, with the version it settled at and
// the version that was requested; the peer appears only as the digest of
// its origin.
func ExampleNegotiationDecided() {
	digest, err := events.PeerDigest("https://Peer.Example:443/a2a/jsonrpc?session=1")
	if err != nil {
		panic(err)
	}
	p := events.NegotiationDecided{
		Protocol:   facets.ProtocolA2A,
		Outcome:    "accepted",
		Version:    "1.1",
		Requested:  "1.2",
		Reason:     events.ReasonOK,
		Floor:      "1.1",
		PeerDigest: digest,
		At:         time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
	}
	if err := p.Validate(); err != nil {
		panic(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))

	// The schema's outcome has two values; "downgraded" is not one.
	err = json.Unmarshal([]byte(`{"protocol":"a2a","outcome":"downgraded","version":"1.1","at":"2026-11-29T12:00:00Z"}`), &p)
	fmt.Println(err)
	// Output:
	// {"protocol":"a2a","outcome":"accepted","version":"1.1","requested":"1.2","reason":"ok","floor":"1.1","peerDigest":"3a61b99132bfdfa2ce5f773d8dc89d8246bfe6b266791549de14a6692d1bb1e1","at":"2026-11-29T12:00:00Z"}
	// events: outcome: "downgraded" is not accepted or refused
}
