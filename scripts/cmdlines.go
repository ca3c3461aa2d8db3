//go:build ignore

// cmdlines counts the lines of Go files by what they are, as
// docs/architecture.md reports the size of cmd/iotap:
//
//	go run scripts/cmdlines.go cmd/iotap
//
// (a directory: its .go files but tests; files are named alike).
// help: lines of raw strings (the help texts: Use/Short/Long/Example;
// blank lines inside them too); flags: lines of flag-definition
// statements (pflag's *Var and *VarP, MarkHidden, MarkDeprecated, a flag
// group's add), and how many calls; imports: import declarations;
// comments: lines holding only a comment; blank; package clauses; code:
// the rest.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	fs := token.NewFileSet()
	cnt := map[string]int{}
	total, calls := 0, 0
	var files []string
	for _, a := range os.Args[1:] {
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			all, _ := filepath.Glob(filepath.Join(a, "*.go"))
			for _, f := range all {
				if !strings.HasSuffix(f, "_test.go") {
					files = append(files, f)
				}
			}
		} else {
			files = append(files, a)
		}
	}
	for _, p := range files {
		f, err := parser.ParseFile(fs, p, nil, parser.ParseComments)
		if err != nil {
			panic(err)
		}
		data, _ := os.ReadFile(p)
		lines := strings.Split(string(data), "\n")
		n := len(lines) - 1
		total += n
		cat := make([]string, n+2)
		tf := fs.File(f.Pos())
		line := func(pos token.Pos) int { return tf.Line(pos) }
		mark := func(a, b int, c string, over bool) {
			for i := a; i <= b && i <= n; i++ {
				if cat[i] == "" || over {
					cat[i] = c
				}
			}
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				mark(line(g.Pos()), line(g.End()), "imports", true)
			}
		}
		mark(line(f.Package), line(f.Name.End()), "package", true)
		ast.Inspect(f, func(nd ast.Node) bool {
			if bl, ok := nd.(*ast.BasicLit); ok && bl.Kind == token.STRING && strings.HasPrefix(bl.Value, "`") {
				mark(line(bl.Pos()), line(bl.End()), "help", true)
			}
			if es, ok := nd.(*ast.ExprStmt); ok {
				if ce, ok := es.X.(*ast.CallExpr); ok {
					if se, ok := ce.Fun.(*ast.SelectorExpr); ok {
						nm := se.Sel.Name
						if strings.HasSuffix(nm, "Var") || strings.HasSuffix(nm, "VarP") || nm == "MarkHidden" || nm == "MarkDeprecated" || nm == "add" {
							calls++
							for i := line(es.Pos()); i <= line(es.End()); i++ {
								if cat[i] != "help" {
									cat[i] = "flags"
								}
							}
						}
					}
				}
			}
			return true
		})
		for i := 1; i <= n; i++ {
			t := strings.TrimSpace(lines[i-1])
			if cat[i] == "" || cat[i] == "flags" && t == "" {
				switch {
				case t == "":
					cat[i] = "blank"
				case strings.HasPrefix(t, "//"):
					cat[i] = "comments"
				default:
					cat[i] = "code"
				}
			}
			cnt[cat[i]]++
		}
	}
	fmt.Printf("total %d:", total)
	for _, c := range []string{"help", "flags", "imports", "comments", "blank", "package", "code"} {
		fmt.Printf(" %s %d", c, cnt[c])
	}
	fmt.Printf(" (flag calls %d)\n", calls)
}
