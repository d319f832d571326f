package negotiate

import "github.com/wopneg/wopneg/events"

// Names the external tests use that are not part of the API.
var ErrNotAdvertised = errNotAdvertised

const DefaultPeerCacheSize = peerCacheSize

// Event is Destination.event.
func (d Destination) Event(payload events.NegotiationDecided) (e events.Event, err error) {
	err = d.event(&e, &payload)
	return e, err
}
