package mcphttp

import (
	"context"
	"net/http"
)

// The names the tests use for the protocol facts and bounds the package
// keeps unexported: they are not part of the API.
const (
	HeaderProtocolVersion = headerProtocolVersion
	HeaderMethod          = headerMethod
	HeaderName            = headerName
	HeaderSessionID       = headerSessionID
	MetaProtocolVersion   = metaProtocolVersion
	StatelessRevision     = statelessRevision
	ImpliedRevision       = impliedRevision
	DefaultMaxBodyBytes   = defaultMaxBodyBytes
	DefaultMaxSessions    = defaultMaxSessions
)

// RevisionError and DiscoverError name the unexported error types for
// errors.As in the tests.
type (
	RevisionError = revisionError
	DiscoverError = discoverError
)

// Discovery is what discover returns, as the tests read it.
type Discovery struct {
	Versions []string
	Refused  bool
}

// Discover calls discover.
func Discover(ctx context.Context, client *http.Client, serverURL, revision string) (Discovery, error) {
	d, err := discover(ctx, client, serverURL, revision, nil)
	return Discovery{Versions: d.versions, Refused: d.refused}, err
}

// Sessions returns how many legacy sessions h, made by Wrap, remembers.
func Sessions(h http.Handler) int {
	s := h.(*handler).sessions
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}
