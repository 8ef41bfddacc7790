package generate

import (
	"bytes"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/emit"
)

// decl is a package-level name a Go file declares: a function, type,
// variable or constant by its name, a method by its receiver's type and
// its name (Machine.State).
type decl struct {
	key, kind string
	pos       token.Position
}

// handClashes reports, at the hand-written declaration, each name that a
// hand-written Go file of a package fsmgen writes into declares and one
// of the generated files declares too (a method of a generated type
// included): the package, or its tests, would not compile, and the
// compiler would point at the generated file. Files an fsmgen wrote
// (its header on the first line), files the build leaves out, and
// external test packages (package x_test) are not the user's to rename
// here.
func handClashes(outputs []Output, diags *diag.List) {
	byDir := map[string][]Output{}
	var dirs []string
	for _, o := range outputs {
		if !strings.HasSuffix(o.Path, ".go") {
			continue
		}
		dir := filepath.Dir(o.Path)
		if byDir[dir] == nil {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], o)
	}
	for _, dir := range dirs {
		generated := map[string]decl{}
		var pkg string
		for _, o := range byDir[dir] {
			name, decls := fileDecls(filepath.Base(o.Path), o.Content)
			if !strings.HasSuffix(name, "_test") {
				pkg = name
			}
			for _, d := range decls {
				generated[d.key] = d
			}
		}
		for _, d := range handDecls(dir, pkg, byDir[dir]) {
			g, ok := generated[d.key]
			if !ok {
				continue
			}
			pos := diag.Pos{File: filepath.Join(dir, filepath.Base(d.pos.Filename)), Line: d.pos.Line, Col: d.pos.Column}
			diags.Errorf(pos, "hand-written %s %s takes the name of the generated %s %s (%s), in package %s: the package would not compile; rename yours", d.kind, d.key, g.kind, g.key, g.pos.Filename, pkg)
		}
	}
}

// handDecls returns the declarations of the hand-written Go files of
// package pkg in dir that the build takes, the outputs' own files left
// out.
func handDecls(dir, pkg string, outputs []Output) []decl {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []decl
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(name, ".go") || slices.ContainsFunc(outputs, func(o Output) bool { return filepath.Base(o.Path) == name }) {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || bytes.Contains(firstLine(src), []byte(emit.Header)) {
			continue
		}
		if p, decls := fileDecls(name, src); p == pkg {
			out = append(out, decls...)
		}
	}
	return out
}

// fileDecls returns the package name of Go file src and its
// package-level declarations; "" and none when it does not parse (the
// compiler says why).
func fileDecls(name string, src []byte) (string, []decl) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return "", nil
	}
	var out []decl
	add := func(id *ast.Ident, key, kind string) {
		if id.Name != "_" && id.Name != "init" {
			out = append(out, decl{key: key, kind: kind, pos: fset.Position(id.Pos())})
		}
	}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				add(d.Name, d.Name.Name, "func")
			} else if recv := receiverType(d.Recv); recv != "" {
				add(d.Name, recv+"."+d.Name.Name, "method")
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					add(s.Name, s.Name.Name, "type")
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n, n.Name, d.Tok.String())
					}
				}
			}
		}
	}
	return file.Name.Name, out
}

// receiverType returns the name of the type a method's receiver names
// (T in T, *T, T[K] and *T[K]).
func receiverType(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) != 1 {
		return ""
	}
	t := recv.List[0].Type
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
