// Package a2acard fetches a peer's agent card and reads the A2A versions it
// offers, once for every A2A binding's outbound side: a2ahttp reads the
// versions of every interface, a2agrpc those of the card's GRPC
// interfaces, through the same fetch (the egress client, the bound, the
// trace context, the retry naming no version after a refusal) and the same
// reader.
package a2acard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/wopneg/wopneg/internal/a2aversion"
	"github.com/wopneg/wopneg/internal/egress"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/internal/tracectx"
	"github.com/wopneg/wopneg/negotiate"
)

// Path is where A2A serves an agent card, for every version.
const Path = "/.well-known/agent-card.json"

// ErrNoVersion is the failure of an object that names no A2A version at
// all: it is no agent card.
var ErrNoVersion = errors.New("the object names neither supportedInterfaces nor protocolVersion")

// Refuses reads the answer to a card request that was not 200 OK as A2A's
// clients read one: whether it refuses the version the request named. It
// is a2ahttp's reader of A2A answers, which a2ahttp sets when it is
// loaded, so that no binding reads a refusal its own way; every outbound
// side of the module loads a2ahttp (a2agrpc takes its OutboundOptions).
// Nil reads no answer as a refusal.
var Refuses func(body []byte) bool

// Fetch is how a card is fetched.
type Fetch struct {
	// Client sends the request: the host's, or the egress client of the
	// host's address policy.
	Client *http.Client
	// Max bounds the card.
	Max int64
	// Trace is the host's trace context hook; nil stamps none.
	Trace negotiate.TraceContext
	// Binding is the protocolBinding whose interfaces are read (GRPC);
	// empty reads every interface.
	Binding string
}

// Offers GETs the card of the peer at peerURL, asking for version (none
// when empty), within the bounds, and returns what it offers; the error of
// an attempt that got no card is an *egress.Error. A card request the peer
// refuses for its version is asked again naming none.
func (f *Fetch) Offers(ctx context.Context, peerURL, version string) ([]string, error) {
	u, err := url.Parse(peerURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		where := "of a peer URL that does not parse"
		if err == nil {
			where = egress.Where(u)
		}
		return nil, &egress.Error{Kind: egress.Denied, URL: where, Err: errors.New("the peer URL is not an absolute http(s) URL")}
	}
	cardURL := u.JoinPath(Path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL.String(), nil)
	if err != nil {
		return nil, &egress.Error{Kind: egress.Denied, URL: egress.Where(cardURL), Err: err}
	}
	if version != "" {
		req.Header.Set(a2aversion.Name, version)
	}
	req.Header.Set("Accept", "application/json")
	tracectx.From(ctx, f.Trace).SetHeader(req.Header)
	resp, err := egress.Do(f.Client, req, f.Max)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err // an *egress.Error: too large, or the peer hung up
	}
	if resp.StatusCode != http.StatusOK {
		if version != "" && Refuses != nil && Refuses(body) {
			// The peer refused the version asked for on its card, as this
			// module's inbound side does for a version it does not serve:
			// its answer about versions is its own card, which a request
			// that names none gets (the v2 card rule).
			return f.Offers(ctx, peerURL, "")
		}
		return nil, egress.NotAnswer(resp, fmt.Errorf("the agent card was answered with HTTP status %d", resp.StatusCode))
	}
	offers, err := Offers(body, f.Binding)
	if err != nil {
		return nil, egress.NotAnswer(resp, err)
	}
	return offers, nil
}

// Offers returns the A2A versions an agent card offers over binding (every
// binding when it is empty): every supportedInterfaces[].protocolVersion
// that is major.minor, of an interface whose protocolBinding is binding,
// in the card's order, each once. A card with none (an A2A 0.3 card)
// offers its top-level protocolVersion cut to major.minor ("0.3.0" offers
// "0.3"), over binding when its preferredTransport or one of its
// additionalInterfaces[].transport names it. That is how the reference
// host reads a card; versions in any other form ("1.0.1", "v1") are not
// offers, and a card may offer nothing. A body that is not a JSON object,
// or an object that names neither supportedInterfaces (an array) nor
// protocolVersion (a string), is no agent card, and an error.
func Offers(card []byte, binding string) ([]string, error) {
	var offers []string
	seen := map[string]bool{} // a hostile card lists tens of thousands: dedupe in linear time
	var fallback string
	named := false
	fallbackBinds := binding == ""
	r := strictjson.NewReader(card, 0)
	err := r.Object(func(key string) error {
		switch key {
		case "supportedInterfaces":
			if k, err := r.Next(); err != nil || k == strictjson.Null {
				return err
			}
			named = true
			return r.Array(func(int) error {
				var version string
				binds := binding == ""
				err := r.Object(func(key string) error {
					if v, ok := stringValue(r, key, "protocolVersion"); ok {
						version = v
					} else if v, ok := stringValue(r, key, "protocolBinding"); ok {
						binds = binds || v == binding
					}
					return nil
				})
				if binds && MajorMinor(version) && !seen[version] {
					seen[version] = true
					offers = append(offers, version)
				}
				return err
			})
		case "protocolVersion":
			var ok bool
			fallback, ok = stringValue(r, key, "protocolVersion")
			named = named || ok
		case "preferredTransport":
			v, ok := stringValue(r, key, "preferredTransport")
			fallbackBinds = fallbackBinds || ok && v == binding
		case "additionalInterfaces":
			if k, err := r.Next(); err != nil || k != strictjson.Array || binding == "" {
				return err
			}
			return r.Array(func(int) error {
				if k, err := r.Next(); err != nil || k != strictjson.Object {
					return err // not an interface: no transport named
				}
				return r.Object(func(key string) error {
					v, ok := stringValue(r, key, "transport")
					fallbackBinds = fallbackBinds || ok && v == binding
					return nil
				})
			})
		}
		return nil
	})
	if err == nil {
		err = r.End()
	}
	if err != nil {
		return nil, fmt.Errorf("the card is not a JSON agent card: %w", err)
	}
	if !named {
		return nil, ErrNoVersion
	}
	if len(offers) > 0 || !fallbackBinds {
		return offers, nil
	}
	if major, rest, ok := strings.Cut(fallback, "."); ok {
		minor, _, _ := strings.Cut(rest, ".")
		if mm := major + "." + minor; MajorMinor(mm) {
			return []string{mm}, nil
		}
	}
	return nil, nil
}

// stringValue reads the value of member key when key is want and the
// value is a string; anything else (a number, null) is not a version, and
// is left for the reader to skip.
func stringValue(r *strictjson.Reader, key, want string) (string, bool) {
	if key != want {
		return "", false
	}
	if k, err := r.Next(); err != nil || k != strictjson.String {
		return "", false
	}
	s, err := r.String()
	return s, err == nil
}

// MajorMinor matches the facet pattern ^[0-9]+\.[0-9]+$.
func MajorMinor(s string) bool {
	major, minor, ok := strings.Cut(s, ".")
	return ok && allDigits(major) && allDigits(minor)
}

func allDigits(s string) bool {
	return s != "" && strings.TrimLeft(s, "0123456789") == ""
}
