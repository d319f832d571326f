// Package rpcerr holds the JSON-RPC errors that carry a version refusal on
// the A2A and MCP wires, shared by the adapters negotiate/a2ahttp and
// negotiate/mcphttp: the registered codes (A2A's -32009, MCP's -32020 and
// -32022, JSON-RPC's -32602), the JSON-RPC error object, A2A 1.0's
// google.rpc.ErrorInfo and the {supported, requested} data of MCP's
// refusals. The v2 envelope and its codes are package errors'.
package rpcerr

import (
	"strconv"
	"strings"
)

// JSON-RPC error codes that carry a version refusal on the wire.
const (
	// RPCA2AVersionNotSupported is A2A's VersionNotSupportedError. On the
	// JSON-RPC binding it travels on HTTP 200; on HTTP+JSON it is a 400.
	RPCA2AVersionNotSupported = -32009
	// RPCMCPHeaderMismatch is MCP's HeaderMismatchError: the
	// MCP-Protocol-Version header and the body's _meta revision (or
	// Mcp-Method and method) disagree. HTTP 400, checked before support.
	RPCMCPHeaderMismatch = -32020
	// RPCMCPUnsupportedProtocolVersion is MCP's
	// UnsupportedProtocolVersionError for stateless (2026-07-28) requests.
	// HTTP 400, data {supported, requested}.
	RPCMCPUnsupportedProtocolVersion = -32022
	// RPCInvalidParams is JSON-RPC's invalid-params error, which MCP's legacy
	// initialize handshake uses to refuse a revision, with data
	// {supported, requested}.
	RPCInvalidParams = -32602
)

// A2AErrorInfoType and A2AErrorDomain name the google.rpc.ErrorInfo detail
// that A2A 1.0 attaches to its errors; A2AReasonVersionNotSupported is the
// reason a version refusal carries.
const (
	A2AErrorInfoType             = "type.googleapis.com/google.rpc.ErrorInfo"
	A2AErrorDomain               = "a2a-protocol.org"
	A2AReasonVersionNotSupported = "VERSION_NOT_SUPPORTED"
)

// RPCError is a JSON-RPC 2.0 error object.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// ErrorInfo is the google.rpc.ErrorInfo detail A2A 1.0 uses in error data.
type ErrorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// VersionData is the data of MCP's -32022 and legacy -32602 refusals.
// Requested is nil when the request named no revision, which the wire shows
// as null rather than leaving the member out.
type VersionData struct {
	Supported []string `json:"supported"`
	Requested *string  `json:"requested"`
	// Reason is why the revision was refused, in the negotiation.decided
	// vocabulary (below-floor, unauthenticated, unsupported), as A2A's
	// ErrorInfo carries its reason: MCP clients show one message for every
	// -32602, and the reason lets a program tell the cases apart. Empty
	// leaves it out.
	Reason string `json:"reason,omitempty"`
}

// A2AVersionNotSupported is the JSON-RPC error an A2A server answers when
// it does not serve the requested version. Data follows the A2A 1.0 error
// details (a list holding one google.rpc.ErrorInfo whose metadata names the
// supported versions, comma-separated) so that current SDK clients surface
// it as VersionNotSupported; [RPCError.WithoutData] drops it for clients
// that predate it.
func A2AVersionNotSupported(requested string, supported []string) RPCError {
	msg := "A2A-Version " + quoteOrNone(requested) + " is not served; this interface serves " + strings.Join(supported, ", ")
	return RPCError{
		Code:    RPCA2AVersionNotSupported,
		Message: msg,
		Data: []ErrorInfo{{
			Type:     A2AErrorInfoType,
			Reason:   A2AReasonVersionNotSupported,
			Domain:   A2AErrorDomain,
			Metadata: map[string]string{"supportedVersions": strings.Join(supported, ",")},
		}},
	}
}

// MCPUnsupportedProtocolVersion is the -32022 error an MCP server answers
// for a revision it does not serve. An empty requested means the request
// named none; it is sent as null.
func MCPUnsupportedProtocolVersion(requested string, supported []string) RPCError {
	return RPCError{
		Code:    RPCMCPUnsupportedProtocolVersion,
		Message: "unsupported MCP protocol version " + quoteOrNone(requested),
		Data:    versionData(requested, supported),
	}
}

// MCPHeaderMismatch is the -32020 error for a request whose headers and
// body disagree; what names the disagreeing pair, for the message.
func MCPHeaderMismatch(what string) RPCError {
	return RPCError{Code: RPCMCPHeaderMismatch, Message: "header mismatch: " + what}
}

// MCPLegacyInitializeUnsupported is the -32602 error a server answers to a
// legacy initialize request whose protocolVersion it will not serve.
func MCPLegacyInitializeUnsupported(requested string, supported []string) RPCError {
	return RPCError{
		Code:    RPCInvalidParams,
		Message: "Unsupported protocol version",
		Data:    versionData(requested, supported),
	}
}

// WithoutData returns e with its data removed, for clients that cannot read
// it.
func (e RPCError) WithoutData() RPCError {
	e.Data = nil
	return e
}

// Error returns the message with its code.
func (e RPCError) Error() string {
	return "json-rpc error " + strconv.Itoa(e.Code) + ": " + e.Message
}

func versionData(requested string, supported []string) VersionData {
	d := VersionData{Supported: append([]string{}, supported...)}
	if requested != "" {
		d.Requested = &requested
	}
	return d
}

func quoteOrNone(v string) string {
	if v == "" {
		return "(none)"
	}
	return `"` + v + `"`
}
