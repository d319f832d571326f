// Package surface is the apicount command: it counts the exported
// identifiers of the packages under the current directory (functions, types,
// methods, interface methods, variables and constants; not struct fields),
// so that the size of the module's surface is a number CI checks. Test
// files, package main, and the directories examples, internal, testdata and
// those whose names begin with a dot are not part of the surface and are not
// counted; nor is a directory below the root that holds a go.mod, a module
// of its own, whose surface is counted from its own root against its own
// bound.
package surface

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Main runs apicount with args, the command line without the program name,
// in the current directory. It writes one line per package and the total to
// stdout, with -v every exported name too, and returns the exit code: 0, 1
// when -max is above 0 and the total is over it, 2 when args or a Go file
// under the directory are not valid (the reason goes to stderr).
func Main(args []string, stdout, stderr io.Writer) int {
	var limit int
	var verbose bool
	flags := flag.NewFlagSet("apicount", flag.ContinueOnError)
	flags.IntVar(&limit, "max", 0, "exit 1 when more than this many identifiers are exported (0: no limit)")
	flags.BoolVar(&verbose, "v", false, "list every exported name")
	flags.SetOutput(stderr)
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	names, err := count(".")
	if err != nil {
		fmt.Fprintln(stderr, "apicount:", err)
		return 2
	}
	pkgs := make([]string, 0, len(names))
	total := 0
	for p, ns := range names {
		pkgs = append(pkgs, p)
		total += len(ns)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fmt.Fprintf(stdout, "%-26s %3d\n", p, len(names[p]))
		if verbose {
			sort.Strings(names[p])
			fmt.Fprintf(stdout, "    %s\n", strings.Join(names[p], " "))
		}
	}
	fmt.Fprintf(stdout, "%-26s %3d\n", "total", total)
	if limit > 0 && total > limit {
		fmt.Fprintf(stderr, "apicount: %d exported identifiers, more than %d\n", total, limit)
		return 1
	}
	return 0
}

// count maps each package directory under root to its exported names.
func count(root string) (map[string][]string, error) {
	names := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if path != root && (base == "examples" || base == "internal" || base == "testdata" || strings.HasPrefix(base, ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
				return filepath.SkipDir // a module of its own, counted from its own root
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		names[pkg] = append(names[pkg], exported(f)...)
		return nil
	})
	return names, err
}

// exported lists the exported declarations of one file. A method counts
// when both it and its receiver's type are exported.
func exported(f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				out = append(out, d.Name.Name)
				continue
			}
			if recv := receiver(d.Recv.List[0].Type); ast.IsExported(recv) {
				out = append(out, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					out = append(out, s.Name.Name)
					if it, ok := s.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							for _, n := range m.Names {
								if n.IsExported() {
									out = append(out, s.Name.Name+"."+n.Name)
								}
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// receiver names a method's receiver type, without pointer or type
// parameters.
func receiver(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
