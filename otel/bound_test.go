package wopnegotel_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	wperrors "github.com/wopneg/wopneg/errors"
	"github.com/wopneg/wopneg/events"
	"github.com/wopneg/wopneg/facets"
	"github.com/wopneg/wopneg/negotiate"
	"github.com/wopneg/wopneg/negotiate/mcphttp"
	"github.com/wopneg/wopneg/negotiate/negotiatetest"
	"github.com/wopneg/wopneg/policy"
)

// maxAttribute is the bound of every string attribute the package sets.
const maxAttribute = 255

// everyKey is every attribute key the package sets: a new one fails
// TestEveryAttributeIsBounded until it is listed here, bounded.
var everyKey = map[string]bool{
	"openwop.negotiation.protocol": true, "openwop.negotiation.outcome": true,
	"openwop.negotiation.requested": true, "openwop.negotiation.negotiated": true,
	"openwop.negotiation.reason": true, "openwop.negotiation.floor": true,
	"openwop.negotiation.rule": true, "openwop.negotiation.peer_digest": true, "openwop.event.id": true,
	"mcp.method.name": true, "mcp.protocol.version": true, "a2a.method.name": true, "a2a.protocol.version": true,
	"error.type": true, "rpc.response.status_code": true, "http.request.method": true,
	"server.address": true, "server.port": true,
}

// checkBounded fails for an attribute of a key not in everyKey, or a
// string value past the bound or not UTF-8.
func checkBounded(t *testing.T, where string, kvs []attribute.KeyValue) {
	t.Helper()
	for _, kv := range kvs {
		if !everyKey[string(kv.Key)] {
			t.Errorf("%s: %s is not a key the bound test knows", where, kv.Key)
		}
		if v := kv.Value.String(); len(v) > maxAttribute || !utf8.ValidString(v) {
			t.Errorf("%s: %s holds %d bytes (UTF-8 %v), past the bound", where, kv.Key, len(v), utf8.ValidString(v))
		}
	}
}

// TestEveryAttributeIsBounded runs every entry point that sets an
// attribute (Emit's span and counter, Observe, the two outbound spans,
// the middleware's Observe) with the longest inputs a caller, a peer or a
// host can give, and checks every attribute of every span and data point:
// a 1 MiB method is _OTHER, as is one the convention does not name, and
// no value passes 255 bytes.
func TestEveryAttributeIsBounded(t *testing.T) {
	huge := strings.Repeat("m", 1<<20)
	k := newKit(t)
	ctx := context.Background()
	observe := func(x negotiate.Exchange) {
		sctx, span := k.tp.Tracer("host").Start(ctx, "observe")
		k.tel.Observe(sctx, x)
		span.End()
	}
	refused := func(p facets.Protocol, code wperrors.Code) negotiate.Outcome {
		return negotiate.Outcome{Kind: negotiate.Refused, Protocol: p, Rule: negotiate.Rule(huge), Error: wperrors.New(code, "x")}
	}
	for _, p := range []facets.Protocol{facets.ProtocolMCP, facets.ProtocolA2A} {
		observe(negotiate.Exchange{Method: huge, Code: -32022, Outcome: refused(p, wperrors.Code(huge))})
		observe(negotiate.Exchange{Method: "no/such-method", Outcome: refused(p, wperrors.InteropVersionUnsupported)})
		observe(negotiate.Exchange{Method: "bad\xff", Outcome: negotiate.Outcome{Kind: negotiate.Accepted, Protocol: p, Rule: "accept"}})
	}
	for _, v := range []string{"1.0", "0.3"} {
		sctx, span := k.tp.Tracer("host").Start(ctx, "emit")
		if err := k.tel.Emit(sctx, validEvent(t, events.NegotiationDecided{Protocol: facets.ProtocolA2A, Outcome: "accepted", Version: v, Requested: v, Floor: "0.3", Reason: "ok", PeerDigest: digest, At: at})); err != nil {
			t.Fatal(err)
		}
		span.End()
	}
	longHost := "http://" + strings.Repeat("h", 1<<16) + ".example:8443/p?q=" + huge
	_, s1 := k.tel.StartServerDiscover(ctx, longHost)
	s1.End()
	_, s2 := k.tel.StartAgentCardFetch(ctx, longHost)
	s2.End()
	// One refused, unauthenticated request through the middleware with a
	// method as long as the body bound lets it be.
	mw, err := mcphttp.New(host(t, policy.Policy{}), mcphttp.Options{Sink: events.NewFanout(&negotiatetest.Recorder{}, k.tel), Observe: k.tel.Observe})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + huge + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`
	through(k, mw.Wrap(jsonServer(`{}`)), mcpRequest("2025-06-18", "", "", body)())

	spans := k.spans.GetSpans()
	if len(spans) != 11 {
		t.Fatalf("%d spans, want 11", len(spans))
	}
	methods := 0
	for _, s := range spans {
		checkBounded(t, "span "+s.Name, s.Attributes)
		if len(s.Status.Description) > maxAttribute+len("negotiation refused: ") {
			t.Errorf("span %s: a status description of %d bytes", s.Name, len(s.Status.Description))
		}
		for _, kv := range s.Attributes {
			if strings.HasSuffix(string(kv.Key), ".method.name") && kv.Value.AsString() != "server/discover" {
				methods++
				if kv.Value.AsString() != "_OTHER" {
					t.Errorf("span %s: %s %q, want _OTHER", s.Name, kv.Key, kv.Value.AsString())
				}
			}
		}
	}
	if methods != 7 {
		t.Errorf("%d unknown methods set, want 7 (each as _OTHER)", methods)
	}
	var rm metricdata.ResourceMetrics
	if err := k.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				points++
				checkBounded(t, "metric "+m.Name, dp.Attributes.ToSlice())
			}
		}
	}
	if points == 0 {
		t.Error("no data point was counted")
	}
}

// TestKnownMethodsAsTheyAre: a method the convention names is set as it
// is.
func TestKnownMethodsAsTheyAre(t *testing.T) {
	k := newKit(t)
	for _, x := range []negotiate.Exchange{
		{Method: "server/discover", Outcome: negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolMCP}},
		{Method: "notifications/tasks/status", Outcome: negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolMCP}},
		{Method: "GetExtendedAgentCard", Outcome: negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A}},
		{Method: "message/send", Outcome: negotiate.Outcome{Kind: negotiate.Accepted, Protocol: facets.ProtocolA2A}},
	} {
		ctx, span := k.tp.Tracer("host").Start(context.Background(), "op")
		k.tel.Observe(ctx, x)
		span.End()
	}
	for i, s := range k.spans.GetSpans() {
		if got := attrs(t, s.Attributes); got["mcp.method.name"]+got["a2a.method.name"] == "_OTHER" {
			t.Errorf("span %d: a known method set as _OTHER: %v", i, got)
		}
	}
}

// TestAttributesAreMadeInOnePlace: no file of the package makes a string
// attribute but through str, the one function that bounds it, so a new
// attribute cannot skip the bound: no Key.String or attribute.String
// call outside it (attribute.Key names a key only), and of semconv's
// helpers only ServerPort (an int).
func TestAttributesAreMadeInOnePlace(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Name.Name == "str" {
				continue
			}
			ast.Inspect(d, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				checked++
				pkg, _ := sel.X.(*ast.Ident)
				switch {
				case sel.Sel.Name == "String" && len(call.Args) == 1, sel.Sel.Name == "StringSlice":
					t.Errorf("%s: %s.%s makes an attribute outside str", fset.Position(call.Pos()), exprString(sel.X), sel.Sel.Name)
				case pkg != nil && pkg.Name == "semconv" && sel.Sel.Name != "ServerPort":
					t.Errorf("%s: semconv.%s makes an attribute outside str", fset.Position(call.Pos()), sel.Sel.Name)
				case pkg != nil && pkg.Name == "attribute" && sel.Sel.Name != "Key":
					t.Errorf("%s: attribute.%s makes an attribute outside str", fset.Position(call.Pos()), sel.Sel.Name)
				}
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatal("no call was checked")
	}
}

func exprString(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "(expression)"
}

// FuzzAttributes: whatever method a caller names, whatever rule or code
// an outcome carries and whatever URL a host dials, every attribute the
// package sets is bounded and UTF-8, and server.address and server.port
// name no path, query or credentials of the URL.
func FuzzAttributes(f *testing.F) {
	f.Add("tools/call", "accept", "internal_error", "https://user:secret@peer.example:8443/mcp/sk-123/sse?api_key=k", true)
	f.Add("SendMessage", "below-floor", "interop_version_unsupported", "http://[::1]:9/a2a", false)
	f.Add(strings.Repeat("m", 300), "r\xff", "", "http://h\xff/?q", true)
	f.Fuzz(func(t *testing.T, method, rule, code, rawURL string, mcp bool) {
		k := newKit(t)
		p := facets.ProtocolA2A
		if mcp {
			p = facets.ProtocolMCP
		}
		ctx, span := k.tp.Tracer("host").Start(context.Background(), "observe")
		k.tel.Observe(ctx, negotiate.Exchange{Method: method, Code: -32022, Outcome: negotiate.Outcome{
			Kind: negotiate.Refused, Protocol: p, Rule: negotiate.Rule(rule), Error: wperrors.New(wperrors.Code(code), "x")}})
		span.End()
		_, s1 := k.tel.StartServerDiscover(context.Background(), rawURL)
		s1.End()
		_, s2 := k.tel.StartAgentCardFetch(context.Background(), rawURL)
		s2.End()
		for _, s := range k.spans.GetSpans() {
			checkBounded(t, "span "+s.Name, s.Attributes)
			for _, kv := range s.Attributes {
				if v := kv.Value.String(); (kv.Key == "server.address" || kv.Key == "server.port") && strings.ContainsAny(v, "/?#@") {
					t.Errorf("span %s: %s = %q names more than the host and port", s.Name, kv.Key, v)
				}
			}
		}
	})
}
