package rpcerr_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/wopneg/wopneg/internal/rpcerr"
)

func TestRPCCodes(t *testing.T) {
	if rpcerr.RPCA2AVersionNotSupported != -32009 || rpcerr.RPCMCPHeaderMismatch != -32020 ||
		rpcerr.RPCMCPUnsupportedProtocolVersion != -32022 || rpcerr.RPCInvalidParams != -32602 {
		t.Fatal("JSON-RPC codes changed")
	}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestA2AVersionNotSupported(t *testing.T) {
	supported := []string{"1.0", "1.1"}
	e := rpcerr.A2AVersionNotSupported("2.0", supported)
	want := rpcerr.RPCError{
		Code:    -32009,
		Message: `A2A-Version "2.0" is not served; this interface serves 1.0, 1.1`,
		Data: []rpcerr.ErrorInfo{{
			Type:     "type.googleapis.com/google.rpc.ErrorInfo",
			Reason:   "VERSION_NOT_SUPPORTED",
			Domain:   "a2a-protocol.org",
			Metadata: map[string]string{"supportedVersions": "1.0,1.1"},
		}},
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("A2AVersionNotSupported = %#v\nwant %#v", e, want)
	}
	wantJSON := `{"code":-32009,"message":"A2A-Version \"2.0\" is not served; this interface serves 1.0, 1.1",` +
		`"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org","metadata":{"supportedVersions":"1.0,1.1"}}]}`
	if got := marshal(t, e); got != wantJSON {
		t.Errorf("JSON\n got %s\nwant %s", got, wantJSON)
	}
	if got := e.Error(); got != `json-rpc error -32009: A2A-Version "2.0" is not served; this interface serves 1.0, 1.1` {
		t.Errorf("Error() = %q", got)
	}
	// WithoutData drops data for older clients and leaves e alone.
	bare := e.WithoutData()
	if got := marshal(t, bare); got != `{"code":-32009,"message":"A2A-Version \"2.0\" is not served; this interface serves 1.0, 1.1"}` {
		t.Errorf("WithoutData JSON = %s", got)
	}
	if e.Data == nil || bare.Code != e.Code || bare.Message != e.Message {
		t.Errorf("WithoutData changed its receiver or lost fields: %#v / %#v", e, bare)
	}
	// No version named.
	if got := rpcerr.A2AVersionNotSupported("", []string{"1.0"}).Message; got != "A2A-Version (none) is not served; this interface serves 1.0" {
		t.Errorf("absent: %q", got)
	}
}

func TestMCPUnsupportedProtocolVersion(t *testing.T) {
	supported := []string{"2025-11-25", "2026-07-28"}
	e := rpcerr.MCPUnsupportedProtocolVersion("2025-06-18", supported)
	supported[0] = "changed"
	want := `{"code":-32022,"message":"unsupported MCP protocol version \"2025-06-18\"","data":{"supported":["2025-11-25","2026-07-28"],"requested":"2025-06-18"}}`
	if got := marshal(t, e); got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
	e = rpcerr.MCPUnsupportedProtocolVersion("", []string{"2026-07-28"})
	want = `{"code":-32022,"message":"unsupported MCP protocol version (none)","data":{"supported":["2026-07-28"],"requested":null}}`
	if got := marshal(t, e); got != want {
		t.Errorf("absent JSON\n got %s\nwant %s", got, want)
	}
	d, ok := e.Data.(rpcerr.VersionData)
	if !ok || d.Requested != nil || !reflect.DeepEqual(d.Supported, []string{"2026-07-28"}) {
		t.Errorf("Data = %#v", e.Data)
	}
	// No supported list is still a list on the wire.
	if got := marshal(t, rpcerr.MCPUnsupportedProtocolVersion("x", nil)); got != `{"code":-32022,"message":"unsupported MCP protocol version \"x\"","data":{"supported":[],"requested":"x"}}` {
		t.Errorf("nil supported: %s", got)
	}
	// A reason goes on the wire beside the lists; none leaves it out.
	e.Data = rpcerr.VersionData{Supported: []string{"2026-07-28"}, Reason: "unauthenticated"}
	if got := marshal(t, e); got != `{"code":-32022,"message":"unsupported MCP protocol version (none)","data":{"supported":["2026-07-28"],"requested":null,"reason":"unauthenticated"}}` {
		t.Errorf("with a reason: %s", got)
	}
	if got := e.WithoutData(); got.Data != nil || got.Code != -32022 {
		t.Errorf("WithoutData = %#v", got)
	}
}

func TestMCPHeaderMismatch(t *testing.T) {
	e := rpcerr.MCPHeaderMismatch("MCP-Protocol-Version and params._meta")
	if got := marshal(t, e); got != `{"code":-32020,"message":"header mismatch: MCP-Protocol-Version and params._meta"}` {
		t.Errorf("JSON = %s", got)
	}
	if e.Error() != "json-rpc error -32020: header mismatch: MCP-Protocol-Version and params._meta" {
		t.Errorf("Error() = %q", e.Error())
	}
}

func TestMCPLegacyInitializeUnsupported(t *testing.T) {
	e := rpcerr.MCPLegacyInitializeUnsupported("2024-11-05", []string{"2025-06-18"})
	want := `{"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2025-06-18"],"requested":"2024-11-05"}}`
	if got := marshal(t, e); got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
	e = rpcerr.MCPLegacyInitializeUnsupported("", []string{"2025-06-18"})
	want = `{"code":-32602,"message":"Unsupported protocol version","data":{"supported":["2025-06-18"],"requested":null}}`
	if got := marshal(t, e); got != want {
		t.Errorf("absent JSON\n got %s\nwant %s", got, want)
	}
	if e.Error() != "json-rpc error -32602: Unsupported protocol version" {
		t.Errorf("Error() = %q", e.Error())
	}
}
