package generate

import (
	"bytes"
	"fmt"
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
// variable or constant by its name, a method or a struct field by its
// type and its name (Machine.State, Placed.Items).
type decl struct {
	key, kind string
	pos       token.Position
}

// handClashes reports each name that a Go file of a package fsmgen
// writes into (other than the outputs of spec) declares and one of the
// outputs declares too (a method of a generated type included): the
// package, or its tests, would not compile, and the compiler would point
// at the generated file. A hand-written declaration is reported where it
// is declared; a file fsmgen generated (its header on the first line) as
// a whole: from spec before, under another machine name, it is stale;
// from another spec, two machines share a package. A file is compared
// with the outputs of its own package: the package and its internal
// tests, or its external tests (package x_test). Files the build leaves
// out are left alone.
func handClashes(spec string, outputs []Output, diags *diag.List) {
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
		var names []string
		for _, o := range byDir[dir] {
			names = append(names, filepath.Base(o.Path))
		}
		others := otherFiles(dir, names)
		if len(others) == 0 {
			continue // (the outputs are not parsed: a large spec's are large)
		}
		// By package: the package's own files and its internal tests, and
		// the external test package (package x_test).
		generated := map[string]map[string]decl{}
		for _, o := range byDir[dir] {
			pkg, decls := fileDecls(filepath.Base(o.Path), o.Content)
			if generated[pkg] == nil {
				generated[pkg] = map[string]decl{}
			}
			for _, d := range decls {
				generated[pkg][d.key] = d
			}
		}
		for _, f := range others {
			pkg := f.pkg
			var clashes []string
			for _, d := range f.decls {
				g, ok := generated[pkg][d.key]
				switch {
				case !ok:
				case f.source == "":
					pos := diag.Pos{File: filepath.Join(dir, f.name), Line: d.pos.Line, Col: d.pos.Column}
					diags.Errorf(pos, "hand-written %s %s takes the name of the generated %s %s (%s), in package %s: the package would not compile; rename yours", d.kind, d.key, g.kind, g.key, g.pos.Filename, pkg)
				default:
					clashes = append(clashes, d.key)
				}
			}
			if len(clashes) == 0 {
				continue
			}
			pos := diag.Pos{File: filepath.Join(dir, f.name)}
			if f.source == filepath.Base(spec) {
				diags.Errorf(pos, "fsmgen generated %s from %s before, under another machine name: it declares %s, as the outputs now do (%s), so the package would not compile; delete %s", f.name, f.source, someNames(clashes), strings.Join(names, ", "), f.name)
			} else {
				diags.Errorf(pos, "%s, generated from %s, declares %s, as the outputs of %s do, in package %s: two machines cannot share a package; give one of them an output.go of its own", f.name, f.source, someNames(clashes), filepath.Base(spec), pkg)
			}
		}
	}
}

// someNames lists the first three of names, and says how many more.
func someNames(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// goFile is a Go file of an output package besides the outputs: its
// name, its package clause, the spec fsmgen generated it from ("" for a
// hand-written file) and its declarations.
type goFile struct {
	name, pkg, source string
	decls             []decl
}

// otherFiles returns the Go files in dir that the build takes, but for
// those named skip (the outputs).
func otherFiles(dir string, skip []string) []goFile {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []goFile
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(name, ".go") || slices.Contains(skip, name) {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		f := goFile{name: name}
		if bytes.Contains(firstLine(src), []byte(emit.Header)) {
			f.source = generatedFrom(src)
		}
		if f.pkg, f.decls = fileDecls(name, src); f.pkg != "" {
			out = append(out, f)
		}
	}
	return out
}

// generatedFrom returns the spec a file fsmgen generated names on its
// header's "source:" line; "?" when it names none.
func generatedFrom(src []byte) string {
	for line := range strings.Lines(string(src)) {
		if !strings.HasPrefix(line, "//") {
			break
		}
		if rest, ok := strings.CutPrefix(line, "// source: "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return "?"
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
					if st, ok := s.Type.(*ast.StructType); ok {
						// A method may not have the name of a field.
						for _, f := range st.Fields.List {
							for _, n := range f.Names {
								add(n, s.Name.Name+"."+n.Name, "field")
							}
						}
					}
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
// (T in T, *T, (*T), T[K] and *T[K]).
func receiverType(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) != 1 {
		return ""
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
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
