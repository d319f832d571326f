package exchange

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/internal/rpcerr"
	"github.com/wopneg/wopneg/negotiate"
)

// PeerRefusal is the error an outbound negotiation, or a Transport a peer
// refused at runtime, returns for o, a refused outcome of an exchange in
// which the peer listed offered (its card's or server/discover's versions,
// or its refusal's data; nil when it listed none) and gave peerReason for
// its own refusal ("" when it gave none or did not refuse). Of what the
// peer said, only the versions of o's protocol, the first 16 of them, and
// a reason of the record's vocabulary are kept: the error is logged, and
// what a peer writes must not fill a log. It is o's
// interop_version_unsupported *errors.Error, its code and status kept,
// with what the peer said: details.offered lists what the peer offered, as
// it listed it, details.peerReason is the peer's reason, and the message
// says both, and says when the caller's identity refused it: the host's
// rule (reason unauthenticated: only an authenticated caller settles below
// the preferred version) or the peer's (peerReason unauthenticated: it
// serves what was asked only to a caller it authenticates). The record is
// o's and is not changed. Nil when o is accepted; o's own error when it is
// no such refusal (an audit that failed, or inputs never sent to a peer).
func PeerRefusal(o negotiate.Outcome, offered []string, peerReason string) error {
	err := o.Err()
	if err == nil || o.Rule == negotiate.RuleInput || o.Error == nil || o.Error.Code != wperrors.InteropVersionUnsupported {
		return err
	}
	// What a peer sends is kept only as far as it is versions of the
	// protocol, and only so many of them: the error is logged.
	var versions []string
	cut := false
	for _, v := range offered {
		if _, err := facets.ParseVersion(o.Protocol, v); err != nil {
			continue
		}
		if len(versions) == maxOffered {
			cut = true
			break
		}
		versions = append(versions, v)
	}
	listed := cmp.Or(strings.Join(versions, ", "), "no version")
	if cut {
		listed += ", ..."
	}
	if !slices.Contains([]string{events.ReasonBelowFloor, events.ReasonUnauthenticated, events.ReasonUnsupported}, peerReason) {
		peerReason = ""
	}
	var said string
	switch {
	case o.Rule == negotiate.RuleAuthenticated:
		said = "the peer offers " + listed + ", below the preferred version, which only an authenticated caller settles on: set OutboundOptions.Subject to the host's identity towards the peer"
	case peerReason == events.ReasonUnauthenticated:
		said = "the peer refused it to an unauthenticated caller, and offers such a caller " + listed + ": send it credentials it accepts (OutboundOptions.Client)"
	default:
		said = "the peer offers " + listed
	}
	e := o.Error.WithDetail("offered", append([]string{}, versions...))
	if peerReason != "" {
		e.Details["peerReason"] = peerReason
	}
	e.Message += "; " + said
	return e
}

// maxOffered is how many of the versions a peer offered a refusal keeps.
const maxOffered = 16

// rpcResponse is a JSON-RPC 2.0 error response.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      jsontext.Value  `json:"id"`
	Error   rpcerr.RPCError `json:"error"`
}

// WriteError answers with e, a JSON-RPC 2.0 error response on HTTP status,
// to the request whose id is id, byte for byte as the request wrote it (a
// client such as a2a-go decodes it into the type it sent); nil is null,
// the id of a request whose id could not be read (JSON-RPC 2.0 §5). The
// ids come from the module's own strict readers, so they marshal.
func WriteError(w http.ResponseWriter, status int, id jsontext.Value, e rpcerr.RPCError) {
	if id == nil {
		id = jsontext.Value("null")
	}
	WriteJSON(w, status, rpcResponse{"2.0", id, e})
}

// WriteJSON answers with v, an error answer of the module's own making
// (which always marshals), as the JSON body of a response of status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client is gone if this fails; nothing to do
}
