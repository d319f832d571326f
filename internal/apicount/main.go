// Command apicount counts the exported identifiers of the module's packages
// (functions, types, methods, interface methods, variables and constants;
// not struct fields), so that the size of the surface is a number CI checks.
// Test files, package main, internal packages and the examples module are
// not part of the surface and are not counted.
//
// Usage, from the module root:
//
//	go run ./internal/apicount [-max N] [-v]
//
// It prints one line per package and the total, with -v every name too, and
// exits 1 when the total is over -max.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	limit := flag.Int("max", 0, "exit 1 when more than this many identifiers are exported (0: no limit)")
	verbose := flag.Bool("v", false, "list every exported name")
	flag.Parse()
	names, err := count(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(2)
	}
	pkgs := make([]string, 0, len(names))
	total := 0
	for p, ns := range names {
		pkgs = append(pkgs, p)
		total += len(ns)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fmt.Printf("%-26s %3d\n", p, len(names[p]))
		if *verbose {
			sort.Strings(names[p])
			fmt.Printf("    %s\n", strings.Join(names[p], " "))
		}
	}
	fmt.Printf("%-26s %3d\n", "total", total)
	if *limit > 0 && total > *limit {
		fmt.Fprintf(os.Stderr, "apicount: %d exported identifiers, more than %d\n", total, *limit)
		os.Exit(1)
	}
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
