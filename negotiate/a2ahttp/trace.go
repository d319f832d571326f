package a2ahttp

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/wopneg/wopneg/internal/exchange"
	"github.com/wopneg/wopneg/internal/strictjson"
	"github.com/wopneg/wopneg/internal/tracectx"
)

// maxStampedBodyBytes bounds the request body a Transport reads to put
// the trace context in its message. A longer body is sent as it came,
// with the trace context in its headers only.
const maxStampedBodyBytes = 4 << 20

// sendMethods are the JSON-RPC methods whose params.message carries the
// trace context: A2A 1.0's and 0.3's names of SendMessage and
// SendStreamingMessage.
var sendMethods = map[string]bool{"SendMessage": true, "SendStreamingMessage": true, "message/send": true, "message/stream": true}

// stampTrace puts tc on out, a copy of a request about to be sent: in its
// headers, and in Message.metadata.openwop of the message it sends, when
// it is a POST of a SendMessage or SendStreamingMessage (JSON-RPC, or the
// HTTP+JSON binding's message:send and message:stream) whose body is at
// most maxStampedBodyBytes. A carrier the caller filled stays as it is; a
// body that is not such a message goes unchanged. The only error is a
// body that could not be read.
func stampTrace(out *http.Request, tc tracectx.Context) error {
	if tc.Parent == "" {
		return nil
	}
	tc.SetHeader(out.Header)
	if out.Method != http.MethodPost || out.Body == nil || out.Body == http.NoBody {
		return nil
	}
	body := out.Body
	held, err := io.ReadAll(io.LimitReader(body, maxStampedBodyBytes+1))
	if err != nil {
		body.Close()
		return fmt.Errorf("a2ahttp: reading the request body: %w", err)
	}
	if len(held) > maxStampedBodyBytes {
		out.Body = exchange.NewReplay(held, nil, body)
		return nil
	}
	body.Close()
	stamped := stampMessage(held, out.URL.Path, tc)
	out.Body = io.NopCloser(bytes.NewReader(stamped))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(stamped)), nil }
	out.ContentLength = int64(len(stamped))
	return nil
}

// stampMessage returns body with tc in the metadata.openwop of the
// message it sends, or body itself when it sends none, is not JSON, or
// its message, metadata or metadata.openwop is not an object, or that
// already holds a traceparent or tracestate: the caller's.
func stampMessage(body []byte, path string, tc tracectx.Context) []byte {
	// No bound of its own on nesting: JSON v2's is the only one.
	r := strictjson.NewReaderRefusingRepeats(body, math.MaxInt)
	defer r.Release()
	var method string
	hasMethod := false
	var inParams, top carrier
	var whole, params int // offsets no carrier needs
	err := objectAt(r, &whole, func(key string) (err error) {
		switch key {
		case "method":
			hasMethod = true
			method, err = r.String() // one that is no string stamps nothing
		case "params":
			err = objectAt(r, &params, func(key string) error {
				if key == "message" {
					return inParams.read(r)
				}
				return nil
			})
		case "message":
			err = top.read(r)
		}
		return err
	})
	var msg carrier
	switch {
	case err != nil:
		return body
	case sendMethods[method]:
		msg = inParams
	case !hasMethod && (strings.HasSuffix(path, "/message:send") || strings.HasSuffix(path, "/message:stream")):
		msg = top
	}
	open, text := msg.insertion(tc.Members())
	if open == absent {
		return body
	}
	return slices.Concat(body[:open+1], []byte(exchange.Leading(body, open, text)), body[open+1:])
}

// Offsets of a carrier's objects that are not there, or are no object.
const (
	absent   = -1
	noObject = -2
)

// carrier is where a message holds its trace context: the offsets of the
// opening braces of the message, its metadata and metadata.openwop
// (absent, or noObject when it is there but is no object), and whether
// openwop holds a traceparent or tracestate already. The zero carrier is
// no message.
type carrier struct {
	found                      bool
	message, metadata, openwop int
	traced                     bool
}

// read reads the message value r is at.
func (c *carrier) read(r *strictjson.Reader) error {
	c.found, c.metadata, c.openwop = true, absent, absent
	return objectAt(r, &c.message, func(key string) error {
		if key != "metadata" {
			return nil
		}
		return objectAt(r, &c.metadata, func(key string) error {
			if key != "openwop" {
				return nil
			}
			return objectAt(r, &c.openwop, func(key string) error {
				c.traced = c.traced || key == tracectx.Parent || key == tracectx.State
				return nil
			})
		})
	})
}

// insertion is the offset of the brace after which the members trace go,
// and the text inserted there; the offset is absent when they go nowhere:
// no message, or a carrier the caller filled or made no object, which
// stays as it is.
func (c carrier) insertion(trace string) (open int, text string) {
	switch {
	case !c.found || c.message == noObject || c.metadata == noObject || c.openwop == noObject || c.traced:
		return absent, ""
	case c.metadata == absent:
		return c.message, `"metadata":{"openwop":{` + trace + `}}`
	case c.openwop == absent:
		return c.metadata, `"openwop":{` + trace + `}`
	}
	return c.openwop, trace
}

// objectAt reads the value r is at: an object, calling member with each
// key for it to read the member's value (one it leaves unread is
// skipped), and sets *open to the offset of its opening brace; any other
// value is skipped, and *open is noObject. The offsets of a body that
// breaks are of no use: its error ends the reading.
func objectAt(r *strictjson.Reader, open *int, member func(key string) error) error {
	if k, _ := r.Next(); k != strictjson.Object {
		*open = noObject
		return r.Skip()
	}
	*open = r.Start()
	return r.Object(member)
}
