package fsm

import (
	"go/scanner"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// GoIdent is a Go identifier of an imported package: its name there and
// the package's import path.
type GoIdent struct {
	GoName       string
	GoImportPath string
}

// GoToken is one token of Go source as the generated code writes it:
// source text (an operator, a literal, a name the generated package
// declares or Go predeclares), or a name of an imported package.
type GoToken struct {
	Text  string
	Ident *GoIdent // set for a qualified name, in place of Text
}

// GoCode is a Go type or expression of the spec, resolved: its qualified
// names carry their import paths, so the emitter writes it without
// parsing it again, under whatever name the generated file imports each
// package.
type GoCode []GoToken

// Predeclared returns the name of the predeclared type the code is
// (string, int, ...), or "".
func (c GoCode) Predeclared() string {
	if len(c) == 1 && c[0].Ident == nil && predeclared[c[0].Text] {
		return c[0].Text
	}
	return ""
}

// goCode resolves Go source that parseType accepted: each pkg.Name whose
// pkg is one of the spec's imports becomes a GoIdent, except a name of
// the output package itself, which the generated files, in that package,
// write unqualified.
func (b *builder) goCode(src string) GoCode {
	return b.resolveCode(src, nil)
}

// exprCode resolves the behavior expression, for a file outside the
// output package (the examples' external test): a name of the output
// package, qualified with an import of it or one of local (the names
// the expression uses unqualified), becomes a GoIdent of it too.
func (b *builder) exprCode(src string, local map[string]bool) GoCode {
	return b.resolveCode(src, local)
}

func (b *builder) resolveCode(src string, local map[string]bool) GoCode {
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	s.Init(file, []byte(src), nil, 0)
	type tok struct {
		t   token.Token
		lit string
	}
	var toks []tok
	for {
		_, t, lit := s.Scan()
		if t == token.EOF {
			break
		}
		if t == token.SEMICOLON && lit == "\n" {
			continue // inserted at the end
		}
		if lit == "" {
			lit = t.String()
		}
		toks = append(toks, tok{t, lit})
	}
	self := b.env.PackagePath
	var out GoCode
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		afterDot := i > 0 && toks[i-1].t == token.PERIOD
		if t.t == token.IDENT && !afterDot && i+2 < len(toks) && toks[i+1].t == token.PERIOD && toks[i+2].t == token.IDENT {
			if imp := b.imports[t.lit]; imp != nil {
				name := toks[i+2].lit
				i += 2
				switch {
				case !b.self(imp.Path.Value):
					out = append(out, GoToken{Ident: &GoIdent{GoName: name, GoImportPath: imp.Path.Value}})
				case local != nil:
					out = append(out, GoToken{Ident: &GoIdent{GoName: name, GoImportPath: self}})
				default:
					out = append(out, GoToken{Text: name})
				}
				continue
			}
		}
		key := i+1 < len(toks) && toks[i+1].t == token.COLON
		if t.t == token.IDENT && !afterDot && !key && local[t.lit] {
			out = append(out, GoToken{Ident: &GoIdent{GoName: t.lit, GoImportPath: self}})
			continue
		}
		out = append(out, GoToken{Text: t.lit})
	}
	return out
}

// self reports whether an import path is the output package's own.
func (b *builder) self(path string) bool {
	return path != "" && path == b.env.PackagePath
}

// importName returns the name the generated files import a package of
// the spec's imports under: its alias, unless generated code uses that
// name itself (a local variable, a package it imports, a predeclared
// identifier), in which case the alias with "pkg" and, if need be, a
// number appended ("pkg" put first for an alias that begins with "fsm",
// which generated names do).
func importName(alias string, taken map[string]bool) string {
	if !reservedName(alias) && !taken[alias] {
		return alias
	}
	base := alias + "pkg"
	if strings.HasPrefix(base, "fsm") {
		base = "pkg" + alias
	}
	name := base
	for i := 2; reservedName(name) || taken[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	return name
}

// reservedName reports whether generated code may use name for something
// else than a package of the spec's imports. (The names of the spec's
// states, events and actions are taken too: see goNames.)
func reservedName(name string) bool {
	return predeclared[name] || localNames[name] || generatedImports[name] || strings.HasPrefix(name, "fsm") ||
		slices.Contains(Generated, name)
}

// aliasesBut returns the aliases of imps but the i-th.
func aliasesBut(imps []Import, i int) map[string]bool {
	taken := map[string]bool{}
	for j, imp := range imps {
		if j != i {
			taken[imp.Alias] = true
		}
	}
	return taken
}
