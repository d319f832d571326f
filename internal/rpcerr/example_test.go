package rpcerr_test

import (
	"encoding/json"
	"fmt"

	"github.com/wopneg/wopneg/internal/rpcerr"
)

// A refusal on an MCP stateless request's JSON-RPC wire: the request named
// no revision, which the data shows as null.
func ExampleMCPUnsupportedProtocolVersion() {
	wire, err := json.Marshal(rpcerr.MCPUnsupportedProtocolVersion("", []string{"2026-07-28"}))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(wire))
	// Output:
	// {"code":-32022,"message":"unsupported MCP protocol version (none)","data":{"supported":["2026-07-28"],"requested":null}}
}
