package wopneg_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// heldClient is one place the repository builds an HTTP client or
// transport, and how it is held: how its connections are shared or
// closed, to whom it sends credentials, and the tests that hold both.
type heldClient struct {
	// pool is "shared" (made once, inside sync.OnceValue or OnceValues), "closed" (its
	// file closes its idle connections when the work ends), "default"
	// (an http.Client over http.DefaultTransport) or "constructor" (it
	// returns what it builds; the places that call it are listed).
	pool string
	// credentials says to whom it sends a credential.
	credentials string
	tests       []string
}

// heldClients are the places, by file and function, that build an HTTP
// client or transport. TestEveryHTTPClientIsHeld fails on a place not
// listed here, so a new client cannot leave its connections open or send
// a credential across origins unreviewed.
var heldClients = map[string]heldClient{
	"internal/egress/client.go:newClient": {"constructor", "only to the request's origin: redirects to another origin are refused",
		[]string{"TestCrossOriginRedirectRefused", "TestDefaultClientIsShared"}},
	"internal/egress/client.go:newTransport":  {"constructor", "none of its own", []string{"TestDefaultClientIsShared"}},
	"internal/egress/client.go:dialVia":       {"constructor", "none of its own", []string{"TestDefaultClientIsShared"}},
	"internal/egress/client.go:NewClient":     {"constructor", "as newClient", []string{"TestCrossOriginRedirectRefused"}},
	"internal/egress/client.go:NewTransport":  {"constructor", "none of its own", []string{"TestPolicyOnResolvedAddress"}},
	"internal/egress/client.go:defaultClient": {"shared", "as newClient", []string{"TestDefaultClientIsShared"}},
	"internal/exchange/peer.go:sharedEgress": {"shared", "as egress.NewClient, one per address policy for both protocols' negotiations and Transports; the caller's Subject never becomes a header",
		[]string{"TestNegotiateEgress", "TestOutboundEgress"}},
	"negotiate/seams/seams.go:read": {"closed", "none: the seams send no credential and follow no redirect",
		[]string{"TestNoConnectionLeftOpen", "TestNoRedirect"}},
	"internal/conform/run.go:Run": {"default", "the bearer only to the host's origin, never after a redirect to another",
		[]string{"TestBearerStaysOnItsOrigin", "TestSameOrigin"}},
	"examples/host/selftest.go:runSelftest": {"default", "none: the self test calls its own host without one",
		[]string{"TestSelftest"}},
}

// clientSite matches what builds a client or a transport: an http.Client
// or http.Transport literal, or a call of egress's constructors.
func clientSite(n ast.Node, inEgress bool) bool {
	switch n := n.(type) {
	case *ast.CompositeLit:
		sel, ok := n.Type.(*ast.SelectorExpr)
		return ok && isIdent(sel.X, "http") && (sel.Sel.Name == "Client" || sel.Sel.Name == "Transport")
	case *ast.CallExpr:
		switch fn := n.Fun.(type) {
		case *ast.SelectorExpr:
			return isIdent(fn.X, "egress") && (fn.Sel.Name == "NewClient" || fn.Sel.Name == "NewTransport")
		case *ast.Ident:
			return inEgress && (fn.Name == "newClient" || fn.Name == "newTransport" || fn.Name == "dialVia")
		}
	}
	return false
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// TestEveryHTTPClientIsHeld is the class rule for HTTP clients: every
// place in the repository (the core, otel and the examples, test files
// aside) that builds an HTTP client or transport is in heldClients, which
// says how its connections are shared or closed and to whom it sends
// credentials; a "shared" one is made inside sync.OnceValue or OnceValues, a "closed"
// one's file closes its idle connections, a "default" one is an
// http.Client with no Transport of its own; and every test named there
// exists.
func TestEveryHTTPClientIsHeld(t *testing.T) {
	found := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		inEgress := filepath.ToSlash(filepath.Dir(path)) == "internal/egress"
		for _, decl := range f.Decls {
			name := declName(decl)
			var stack []ast.Node
			ast.Inspect(decl, func(n ast.Node) bool {
				if n == nil {
					stack = stack[:len(stack)-1]
					return true
				}
				stack = append(stack, n)
				if !clientSite(n, inEgress) {
					return true
				}
				site := filepath.ToSlash(path) + ":" + name
				found[site] = true
				held, ok := heldClients[site]
				if !ok {
					t.Errorf("%s builds an HTTP client or transport that heldClients does not list: say how its connections are shared or closed, to whom it sends credentials, and the tests that hold it", fset.Position(n.Pos()))
					return true
				}
				switch held.pool {
				case "shared":
					if !slices.ContainsFunc(stack, isOnceValue) {
						t.Errorf("%s: %s is listed as shared, but is not made inside sync.OnceValue", fset.Position(n.Pos()), site)
					}
				case "closed":
					if !strings.Contains(string(src), ".CloseIdleConnections()") {
						t.Errorf("%s: %s is listed as closed, but its file closes no idle connections", fset.Position(n.Pos()), site)
					}
				case "default":
					if lit, ok := n.(*ast.CompositeLit); !ok || hasField(lit, "Transport") && !strings.Contains(string(src), "http.DefaultTransport") {
						t.Errorf("%s: %s is listed as over http.DefaultTransport, but brings a transport of its own", fset.Position(n.Pos()), site)
					}
				case "constructor":
					if !inEgress {
						t.Errorf("%s: only egress's constructors are listed as constructors", site)
					}
				default:
					t.Errorf("%s: pool %q is not shared, closed, default or constructor", site, held.pool)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defined := definedTests(t)
	for site, held := range heldClients {
		if !found[site] {
			t.Errorf("heldClients lists %s, which builds no client any more", site)
		}
		if held.credentials == "" || len(held.tests) == 0 {
			t.Errorf("%s: say to whom it sends credentials, and the tests that hold it", site)
		}
		for _, name := range held.tests {
			if !defined[name] {
				t.Errorf("%s names %s, which no _test.go file defines", site, name)
			}
		}
	}
}

// declName is the name of a function, or of the first name a var
// declaration declares.
func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Name.Name
	case *ast.GenDecl:
		for _, s := range d.Specs {
			if v, ok := s.(*ast.ValueSpec); ok && len(v.Names) > 0 {
				return v.Names[0].Name
			}
		}
	}
	return ""
}

// isOnceValue reports whether n is a call of sync.OnceValue or sync.OnceValues.
func isOnceValue(n ast.Node) bool {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && isIdent(sel.X, "sync") && (sel.Sel.Name == "OnceValue" || sel.Sel.Name == "OnceValues")
}

// hasField reports whether lit sets the field name.
func hasField(lit *ast.CompositeLit, name string) bool {
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok && isIdent(kv.Key, name) {
			return true
		}
	}
	return false
}

// definedTests are the test and fuzz functions of the repository.
func definedTests(t *testing.T) map[string]bool {
	t.Helper()
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return defined
}
