package negotiate

import "github.com/wopneg/wopneg/events"

// Names the external tests use that are not part of the API.
var ErrNotAdvertised = errNotAdvertised

const DefaultPeerCacheSize = peerCacheSize

// Event is Destination.event.
func (d Destination) Event(payload events.NegotiationDecided) (events.Event, error) {
	return d.event(payload)
}
