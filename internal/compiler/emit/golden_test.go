package emit_test

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// handWritten reports whether a file of a golden archive is a hand-written
// Go file of the output package, an input, rather than a pinned output
// (fsmgen names those *_gen.go, *_gen_test.go, *_examples_gen_test.go).
func handWritten(name string) bool {
	return strings.HasSuffix(name, ".go") && !strings.Contains(name, "_gen")
}

// build parses and checks the archive's spec.yaml, as in a module
// example.com/NAME (the archive's name) holding the archive's files: the
// generated package is at its root, and the archive's hand-written Go
// files (those not named as fsmgen names its outputs) declare what the
// spec may name of it.
func build(t *testing.T, path string, ar *txtar.Archive) *fsm.Machine {
	t.Helper()
	env := stdEnv()
	env.PackagePath = "example.com/" + strings.TrimSuffix(filepath.Base(path), ".txtar")
	for _, f := range ar.Files {
		if !handWritten(f.Name) {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f.Name, f.Data, 0)
		require.NoError(t, err)
		env.LocalNames = append(env.LocalNames, declared(parsed)...)
	}
	for _, f := range ar.Files {
		if f.Name == "spec.yaml" {
			sf, diags := spec.Parse("spec.yaml", f.Data)
			require.False(t, diags.HasErrors(), "%s", diags)
			m, diags := fsm.Build(sf, env)
			require.NotNil(t, m, "%s", diags)
			require.Empty(t, diags, "a golden spec has no warnings")
			return m
		}
	}
	t.Fatal("archive has no spec.yaml")
	return nil
}

// pinned returns what a golden file of an archive pins in the generated
// files: "FILE", a whole generated file, or "FILE:NAME", one top-level
// declaration of a generated Go file, with its doc comment: a function
// (NAME), a method (Recv.NAME), a type, a variable or a constant block
// (its first name), or "header", the file up to the end of its imports.
// ok is false when the archive names nothing the machine generates.
func pinned(out map[string][]byte, name string) (content []byte, ok bool, err error) {
	file, decl, isDecl := strings.Cut(name, ":")
	src, ok := out[file]
	if !ok {
		return nil, false, nil
	}
	if !isDecl {
		return src, true, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return nil, true, err
	}
	offset := func(p token.Pos) int { return fset.Position(p).Offset }
	text := func(from, to int) []byte { return append(src[from:to:to], '\n') }
	if decl == "header" {
		end := f.Name.End()
		for _, d := range f.Decls {
			if g, isGen := d.(*ast.GenDecl); isGen && g.Tok == token.IMPORT {
				end = g.End()
			}
		}
		return text(0, offset(end)), true, nil
	}
	for _, d := range f.Decls {
		start, names := d.Pos(), declNames(d)
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				start = d.Doc.Pos()
			}
		case *ast.GenDecl:
			if d.Doc != nil {
				start = d.Doc.Pos()
			}
		}
		for _, n := range names {
			if n == decl {
				return text(offset(start), offset(d.End())), true, nil
			}
		}
	}
	return nil, true, fmt.Errorf("%s declares no %s", file, decl)
}

// declNames returns the names a golden file may pin a declaration by.
func declNames(d ast.Decl) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
		recv := d.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		if id, ok := recv.(*ast.Ident); ok {
			return []string{id.Name + "." + d.Name.Name}
		}
	case *ast.GenDecl:
		var out []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				out = append(out, s.Names[0].Name)
			}
		}
		return out
	}
	return nil
}

// TestGolden generates every archive's spec and compares what the archive
// pins, each a whole file or a whole declaration (see pinned), with one
// behaviour of the emitter each; -update rewrites them. The generated
// packages of the repository, built and tested as they are, are the
// end-to-end check of the rest.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/golden/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			require.NoError(t, err)
			m := build(t, path, ar)
			files, err := emit.All(m)
			require.NoError(t, err)
			require.NoError(t, verifyGo(m, files))
			require.NoError(t, verifyDocs(m, files))
			out := map[string][]byte{}
			for _, f := range files {
				out[f.Path] = f.Content
			}
			pins := 0
			for i, f := range ar.Files {
				if f.Name == "spec.yaml" || handWritten(f.Name) {
					continue
				}
				got, ok, err := pinned(out, f.Name)
				require.NoError(t, err)
				require.True(t, ok, "%s pins %s, which the spec does not generate", path, f.Name)
				pins++
				if *update {
					ar.Files[i].Data = got
					continue
				}
				assert.Equal(t, string(f.Data), string(got), "%s: %s differs (run go test -update if the change is intended)", path, f.Name)
			}
			require.NotZero(t, pins, "%s pins nothing: add a file or declaration to it", path)
			if *update {
				require.NoError(t, os.WriteFile(path, txtar.Format(ar), 0o644))
			}
		})
	}
}

// TestDeterministic checks that emitting the same machine twice gives the
// same bytes.
func TestDeterministic(t *testing.T) {
	const path = "testdata/golden/hierarchy.txtar"
	ar, err := txtar.ParseFile(path)
	require.NoError(t, err)
	first, err := emit.All(build(t, path, ar))
	require.NoError(t, err)
	for range 5 {
		again, err := emit.All(build(t, path, ar))
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
}
