package generate

import (
	"bytes"
	"errors"
	"fmt"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"

	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// env returns what the checker may know of the Go world around spec f,
// read from disk: the packages its imports name, type-checked (loaded
// with go/packages from the spec's directory, so in the module that holds
// it), and the names that hand-written files of its output package
// declare. The output package itself is not loaded: before it is
// generated it does not compile, and what the spec may use of it is read
// from its hand-written files.
func env(f *spec.File) fsm.Env {
	dir := filepath.Dir(f.Path)
	e := fsm.Env{}
	if f.Output.Go.Set && !filepath.IsAbs(f.Output.Go.Value) {
		out := filepath.Join(dir, filepath.FromSlash(f.Output.Go.Value))
		e.LocalTypes, e.LocalNames = localDecls(out)
		e.PackagePath = packagePath(out)
	}
	var paths []string
	for _, imp := range f.Imports {
		if imp.Path.Set && imp.Path.Value != e.PackagePath && !slices.Contains(paths, imp.Path.Value) {
			paths = append(paths, imp.Path.Value)
		}
	}
	if len(paths) > 0 {
		pkgs, errs := loadPackages(dir, paths)
		for p, err := range errs {
			if e.PackagePath != "" && dependsOn(dir, p, e.PackagePath) {
				errs[p] = fmt.Errorf("%w: %w", fsm.ErrNeedsGenerated, err)
			}
		}
		e.Import = func(path string) (*types.Package, error) {
			if err := errs[path]; err != nil {
				return nil, err
			}
			return pkgs[path], nil
		}
	}
	return e
}

// dependsOn reports whether the package at path imports the package at
// target, directly or not, as go list sees it from dir.
func dependsOn(dir, path, target string) bool {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps, Dir: dir}
	loaded, err := packages.Load(cfg, path)
	if err != nil {
		return false
	}
	found := false
	packages.Visit(loaded, func(p *packages.Package) bool {
		found = found || p.PkgPath == target
		return !found
	}, nil)
	return found
}

// packagePath returns the import path of the package in directory dir:
// the path of the module that holds it joined with dir's place in it; ""
// when dir is in no module.
func packagePath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			mod := modfile.ModulePath(data)
			rel, err := filepath.Rel(d, abs)
			if mod == "" || err != nil {
				return ""
			}
			return path.Join(mod, filepath.ToSlash(rel))
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// loadPackages type-checks the packages at paths, as imported from dir.
func loadPackages(dir string, paths []string) (map[string]*types.Package, map[string]error) {
	pkgs, errs := map[string]*types.Package{}, map[string]error{}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: dir}
	loaded, err := packages.Load(cfg, paths...)
	if err != nil {
		for _, p := range paths {
			errs[p] = err
		}
		return pkgs, errs
	}
	for _, p := range loaded {
		path := p.PkgPath
		if path == "" {
			path = p.ID
		}
		if len(p.Errors) > 0 {
			var msgs []string
			for _, e := range p.Errors {
				msgs = append(msgs, e.Msg)
			}
			errs[path] = errors.New(strings.Join(msgs, "; "))
			continue
		}
		if p.Types != nil {
			pkgs[path] = p.Types
		}
	}
	for _, p := range paths {
		if pkgs[p] == nil && errs[p] == nil {
			errs[p] = fmt.Errorf("go list found no package %s from %s: run fsmgen in a module that requires it (go get it, then go mod tidy)", p, dir)
		}
	}
	return pkgs, errs
}

// localDecls returns the names of the types, and of all the
// package-level declarations (types, functions, variables, constants),
// that the hand-written (not generated, not test) Go files of dir
// declare. Files that do not parse are skipped: the compiler reports
// them.
func localDecls(dir string) (typeNames, names []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || bytes.Contains(firstLine(src), []byte(emit.Header)) {
			continue
		}
		_, decls := fileDecls(name, src)
		for _, d := range decls {
			switch d.kind {
			case "type":
				typeNames = append(typeNames, d.key)
				names = append(names, d.key)
			case "func", "var", "const":
				names = append(names, d.key)
			}
		}
	}
	slices.Sort(typeNames)
	slices.Sort(names)
	return slices.Compact(typeNames), slices.Compact(names)
}

func firstLine(src []byte) []byte {
	line, _, _ := bytes.Cut(src, []byte("\n"))
	return line
}
