package mcphttp

import (
	"bytes"
	"testing"

	"github.com/wopneg/wopneg/internal/exchange"
)

// FuzzServed feeds what a wrapped server could answer to the readers of
// answer.go (the engine's lenient reader has FuzzRefusalRead): they never
// panic, an event stream reads the same however it
// is split into writes, and an answer is read the same on its own as when
// it is the one event of a stream.
func FuzzServed(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":3,"result":{"supportedVersions":["2025-11-25","2026-07-28"]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`,
		`[{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x"}}]`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32022.0,"message":"x"}}`,
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r\n\r\ndata: {\"id\":1,\r\ndata: \"result\":{}}\r\r",
		`{"result":{},"result":{}}`, `[[[[[[[[[[`, "",
		`{"id":[{"a":1,"a":2}],"result":{}}`, `{"error":{"code":[{"\xff":1}]}}`,
	} {
		f.Add([]byte(seed), uint16(7))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		readReply(b)
		var whole sseScanner
		want, wantOK := whole.response(b)
		var split sseScanner
		at := int(cut) % (len(b) + 1)
		got, ok := split.response(b[:at])
		if !ok {
			got, ok = split.response(b)
		}
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("split at %d: %q %v, whole: %q %v", at, got, ok, want, wantOK)
		}
		if bytes.ContainsAny(b, "\r\n") {
			return
		}
		var one sseScanner
		data, ok := one.response([]byte("data: " + string(b) + "\n\n"))
		if ok != isResponse(b) || ok && !bytes.Equal(data, b) {
			t.Fatalf("%q as an event: %q %v, on its own a response: %v", b, data, ok, isResponse(b))
		}
	})
}

// TestSSEScannerByteByByte feeds an event stream one byte at a time, as a
// slow server sends it: the scanner finds the response as it does in one
// piece, a \r at the end of one read and its \n in the next included.
func TestSSEScannerByteByByte(t *testing.T) {
	const resp = `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, stream := range []string{
		"event: message\r\ndata: " + resp + "\r\n\r\n",
		": note\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\ndata: " + resp + "\n\n",
		"data: " + resp + "\r\r\n",
	} {
		var s sseScanner
		var got []byte
		for i := 1; i <= len(stream) && got == nil; i++ {
			if data, ok := s.response([]byte(stream[:i])); ok {
				if i != len(stream) {
					t.Errorf("%q: response at byte %d of %d", stream, i, len(stream))
				}
				got = data
			}
		}
		if string(got) != resp {
			t.Errorf("%q: got %q", stream, got)
		}
	}
}

// TestReadReplyMessage refuses a response whose error.message is not a
// string, and reads one that is.
// TestReadReplyInsideAValueReadWhole: an answer whose id or error code,
// read whole, breaks a rule deep inside is refused, naming where.
func TestReadReplyInsideAValueReadWhole(t *testing.T) {
	for body, want := range map[string]string{
		`{"id":[{"a":1,"a":2}],"result":{}}`:        `id[0]: the key "a" appears twice`,
		`{"error":{"code":[{"a":1,"a":2}]},"id":1}`: `error.code[0]: the key "a" appears twice`,
	} {
		if _, err := readReply([]byte(body)); err == nil || err.Error() != want {
			t.Errorf("readReply(%s): %v, want %s", body, err, want)
		}
	}
}

func TestReadReplyMessage(t *testing.T) {
	if _, err := readReply([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":2}}`)); err == nil {
		t.Error("an error.message that is a number was read")
	}
	if rep, err := readReply([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`)); err != nil || rep.message != "no" || rep.code != -32601 {
		t.Errorf("%+v, %v", rep, err)
	}
}

// sseScanner is the adapters' event-stream reader, with the search for
// the JSON-RPC response an answer carries.
type sseScanner struct{ exchange.EventScanner }

// response returns the data of the next event s completes in b that is a
// JSON-RPC response, passing over the notifications and requests before it.
func (s *sseScanner) response(b []byte) ([]byte, bool) {
	for {
		data, ok := s.Next(b)
		if !ok || isResponse(data) {
			return data, ok
		}
	}
}

// isResponse reports whether data is a JSON-RPC response, not a request
// or notification the server sent before it.
func isResponse(data []byte) bool {
	_, err := readReply(data)
	return err == nil
}
