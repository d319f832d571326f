package strictjson

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// seeds returns every JSON body the module's tests hold: the string
// literals of its test files that start like a JSON value, its testdata
// files, and its fuzz corpora.
func seeds(tb testing.TB) [][]byte {
	var out [][]byte
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, "_test.go"):
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						if t := strings.TrimSpace(s); t != "" && strings.ContainsAny(t[:1], `{["`) {
							out = append(out, []byte(s))
						}
					}
				}
				return true
			})
		case strings.Contains(path, "testdata") && strings.HasSuffix(path, ".json"):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out = append(out, data)
		case strings.Contains(path, filepath.Join("testdata", "fuzz")):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, line := range strings.Split(string(data), "\n") {
				for _, prefix := range []string{"[]byte(", "string("} {
					if q, ok := strings.CutPrefix(line, prefix); ok {
						if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
							out = append(out, []byte(s))
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestSeedsFound(t *testing.T) {
	if n := len(seeds(t)); n < 1000 {
		t.Errorf("%d seeds, want the module's test bodies (over a thousand)", n)
	}
}
