package surface

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixture is the output of apicount, without -v, in testdata/src/p.
const fixture = `.                           13
empty                        0
sub                          1
total                       14
`

// fixtureNames is the output of apicount -v in testdata/src/p.
const fixtureNames = "" +
	".                           13\n" +
	"    C F G G.N I I.Do J J.Run P P.Get T T.M V\n" +
	"empty                        0\n" +
	"    \n" +
	"sub                          1\n" +
	"    One\n" +
	"total                       14\n"

// run calls Main with args in dir and returns the exit code and what was
// written to stdout and stderr.
func run(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Chdir(dir)
	var out, errs bytes.Buffer
	code = Main(args, &out, &errs)
	return code, out.String(), errs.String()
}

func TestMain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		stdout    string
		stderr    string // what stderr starts with
		stderrHas string // what stderr contains, besides
	}{
		{name: "no flags", code: 0, stdout: fixture},
		{name: "no limit", args: []string{"-max", "0"}, code: 0, stdout: fixture},
		{name: "negative limit is none", args: []string{"-max", "-1"}, code: 0, stdout: fixture},
		{name: "total equals max", args: []string{"-max", "14"}, code: 0, stdout: fixture},
		{name: "total under max", args: []string{"-max", "15"}, code: 0, stdout: fixture},
		{
			name: "total over max", args: []string{"-max", "13"}, code: 1, stdout: fixture,
			stderr: "apicount: 14 exported identifiers, more than 13\n",
		},
		{
			name: "total far over max", args: []string{"-max=1"}, code: 1, stdout: fixture,
			stderr: "apicount: 14 exported identifiers, more than 1\n",
		},
		{name: "verbose", args: []string{"-v"}, code: 0, stdout: fixtureNames},
		{
			name: "verbose over max", args: []string{"-v", "-max", "13"}, code: 1, stdout: fixtureNames,
			stderr: "apicount: 14 exported identifiers, more than 13\n",
		},
		{
			name: "unknown flag", args: []string{"-x"}, code: 2,
			stderr: "flag provided but not defined: -x\n", stderrHas: "Usage of apicount:",
		},
		{
			name: "max not a number", args: []string{"-max", "many"}, code: 2,
			stderr: `invalid value "many" for flag -max`, stderrHas: "Usage of apicount:",
		},
		{name: "help", args: []string{"-h"}, code: 0, stderr: "Usage of apicount:", stderrHas: "-max int"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "testdata/src/p", tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			if stdout != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.stdout)
			}
			if tc.stderr == "" && stderr != "" || !strings.HasPrefix(stderr, tc.stderr) {
				t.Errorf("stderr %q, want it to begin with %q", stderr, tc.stderr)
			}
			if !strings.Contains(stderr, tc.stderrHas) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.stderrHas)
			}
		})
	}
}

func TestMainRefusesBrokenGo(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte("package b; func ("), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, dir, "-max", "250")
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	if !strings.HasPrefix(stderr, "apicount: b.go:1:") {
		t.Errorf("stderr %q, want the parse error of b.go", stderr)
	}
}

func TestCountMissingRoot(t *testing.T) {
	if _, err := count(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a directory that does not exist was counted")
	}
}

// TestCountSkips writes Kept in the root's r.go and Skipped in one other
// file, and wants only Kept counted.
func TestCountSkips(t *testing.T) {
	for _, tc := range []struct {
		name, path, src string
	}{
		{"test file", "r_test.go", "package r\n\nfunc Skipped() {}\n"},
		{"package main", "cmd/main.go", "package main\n\nfunc Skipped() {}\n"},
		{"not Go", "r.go.txt", "package r\n\nfunc Skipped() {}\n"},
		{"examples", "examples/e/e.go", "package e\n\nfunc Skipped() {}\n"},
		{"internal", "internal/i.go", "package i\n\nfunc Skipped() {}\n"},
		{"internal below", "a/internal/i.go", "package i\n\nfunc Skipped() {}\n"},
		{"testdata", "testdata/d.go", "package d\n\nfunc Skipped() {}\n"},
		{"dot directory", ".git/g.go", "package g\n\nfunc Skipped() {}\n"},
		{"dot directory below", "a/.cache/c.go", "package c\n\nfunc Skipped() {}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, "r.go"), "package r\n\nfunc Kept() {}\n")
			write(t, filepath.Join(root, tc.path), tc.src)
			names, err := count(root)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{filepath.ToSlash(root): {"Kept"}}
			if !equal(names, want) {
				t.Errorf("counted %v, want %v", names, want)
			}
		})
	}
}

// TestCountRoot counts a root whose name would be skipped below it.
func TestCountRoot(t *testing.T) {
	for _, base := range []string{"examples", "internal", "testdata", ".dot"} {
		t.Run(base, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), base)
			write(t, filepath.Join(root, "r.go"), "package r\n\nfunc Kept() {}\n")
			write(t, filepath.Join(root, "s", "s.go"), "package s\n\nfunc Sub() {}\n")
			names, err := count(root)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{
				filepath.ToSlash(root):        {"Kept"},
				filepath.ToSlash(root) + "/s": {"Sub"},
			}
			if !equal(names, want) {
				t.Errorf("counted %v, want %v", names, want)
			}
		})
	}
}

func TestCountFixture(t *testing.T) {
	names, err := count("testdata/src/p")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"testdata/src/p":       {"C", "F", "G", "G.N", "I", "I.Do", "J", "J.Run", "P", "P.Get", "T", "T.M", "V"},
		"testdata/src/p/empty": nil,
		"testdata/src/p/sub":   {"One"},
	}
	if !equal(names, want) {
		t.Errorf("counted %v, want %v", names, want)
	}
}

func TestExported(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"function", "func F() {}\nfunc f() {}", []string{"F"}},
		{"value receiver", "type T struct{}\n\nfunc (T) M() {}\nfunc (T) m() {}", []string{"T", "T.M"}},
		{"pointer receiver", "type T struct{}\n\nfunc (*T) M() {}", []string{"T", "T.M"}},
		{"unexported receiver", "type t struct{}\n\nfunc (t) M() {}\nfunc (*t) N() {}", nil},
		{"generic receiver", "type G[X any] struct{}\n\nfunc (G[X]) M() {}\nfunc (*G[X]) N() {}", []string{"G", "G.M", "G.N"}},
		{"two type parameters", "type P[K comparable, V any] struct{}\n\nfunc (*P[K, V]) M() {}", []string{"P", "P.M"}},
		{"unexported generic receiver", "type g[X any] struct{}\n\nfunc (*g[X]) M() {}", nil},
		{"interface", "type I interface {\n\tDo()\n\thide()\n\tfmt.Stringer\n}", []string{"I", "I.Do"}},
		{"unexported interface", "type i interface{ Do() }", nil},
		{"struct fields", "type S struct{ Field, field int }", []string{"S"}},
		{"variables", "var V, v = 1, 2\n\nvar (\n\tW = 3\n\tw = 4\n)", []string{"V", "W"}},
		{"constants", "const C, c = 1, 2", []string{"C"}},
		{"import", "import \"fmt\"\n\nvar _ = fmt.Sprint", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n\n"+tc.src+"\n", parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			got := exported(f)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("exported %v, want %v", got, tc.want)
			}
		})
	}
}

func write(t *testing.T, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

// equal compares counts, whatever the order of each package's names.
func equal(got, want map[string][]string) bool {
	if len(got) != len(want) {
		return false
	}
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			return false
		}
		g = slices.Clone(g)
		slices.Sort(g)
		if !slices.Equal(g, w) {
			return false
		}
	}
	return true
}

// TestCountSkipsNestedModules: a directory below the root holding a
// go.mod is a module of its own, not part of the root's surface.
func TestCountSkipsNestedModules(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "r.go"), "package r\n\nfunc Kept() {}\n")
	write(t, filepath.Join(root, "m", "go.mod"), "module example.com/r/m\n")
	write(t, filepath.Join(root, "m", "m.go"), "package m\n\nfunc Skipped() {}\n")
	write(t, filepath.Join(root, "m", "s", "s.go"), "package s\n\nfunc Skipped() {}\n")
	names, err := count(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{filepath.ToSlash(root): {"Kept"}}; !equal(names, want) {
		t.Errorf("counted %v, want %v", names, want)
	}
	if names, err = count(filepath.Join(root, "m")); err != nil || len(names) != 2 {
		t.Errorf("the nested module from its own root: %v, %v", names, err)
	}
}
