package diag

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// messageDirs are the packages, relative to this one, whose diagnostics
// must all have a rule.
var messageDirs = []string{"../spec", "../fsm", "../generate", "../../../cmd/fsmgen"}

// TestEveryMessageHasOneRule parses every non-test Go file of the packages
// that report diagnostics, finds every call of Errorf and Warnf (and of the
// wrappers that forward their format to them, such as the parser's and the
// builder's errorf), turns each format string into a sample message, and
// checks that exactly one rule matches it, with the severity of the call.
// A new message without a rule, or one two rules claim, fails here.
func TestEveryMessageHasOneRule(t *testing.T) {
	var calls []formatCall
	for _, dir := range messageDirs {
		calls = append(calls, findFormatCalls(t, dir)...)
	}
	require.Greater(t, len(calls), 100, "the scan should find fsmgen's messages")

	used := map[string]bool{}
	for _, c := range calls {
		msg := sampleMessage(c.format)
		ids := matching(msg)
		if !assert.Len(t, ids, 1, "%s: message %q (format %q) must match exactly one rule in internal/compiler/diag/rules.go; matches %v", c.pos, msg, c.format, ids) {
			continue
		}
		used[ids[0]] = true
		r, _ := RuleByID(ids[0])
		assert.Equal(t, c.severity, r.Level, "%s: %q is a %s but its rule %s is a %s", c.pos, msg, c.severity, r.ID, r.Level)
	}
	for _, r := range rules {
		if r.ID != Unclassified {
			assert.True(t, used[r.ID], "rule %s matches no message fsmgen produces: remove it or fix its patterns", r.ID)
		}
	}
}

// TestFormatCallsSeesWrappers checks the scan itself on a small package:
// direct calls, a wrapper's calls, constants and concatenations are found,
// fmt.Errorf is not, and a format that is not a constant fails the test
// (through the fake testing.T).
func TestFormatCallsSeesWrappers(t *testing.T) {
	dir := t.TempDir()
	src := `package x

import "fmt"

const prefix = "unknown "

type b struct{ diags List }

func (b *b) errorf(pos Pos, format string, args ...any) { b.diags.Errorf(pos, format, args...) }

func (b *b) run(l *List, dyn string) {
	b.errorf(Pos{}, "unknown state %q%s", "x", "")
	l.Warnf(Pos{}, "action %s is never emitted", "A")
	b.errorf(Pos{}, prefix+"key %q", "k")
	_ = fmt.Errorf("not a diagnostic %d", 1)
}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644))
	calls := findFormatCalls(t, dir)
	var got []string
	for _, c := range calls {
		got = append(got, fmt.Sprintf("%s %s", c.severity, c.format))
	}
	assert.ElementsMatch(t, []string{
		`error unknown state %q%s`,
		`warning action %s is never emitted`,
		`error unknown key %q`,
	}, got)

	bad := `package x

func f(l *List, dyn string) {
	msg := "state " + dyn
	l.Errorf(Pos{}, msg)
}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.go"), []byte(bad), 0o644))
	fake := &recordingT{T: t}
	findFormatCalls(fake, dir)
	assert.True(t, fake.failed, "a format that is not a constant must fail the scan")
}

// recordingT is a testing.TB that records failures instead of failing.
type recordingT struct {
	*testing.T
	failed bool
}

func (r *recordingT) Errorf(string, ...any) { r.failed = true }
func (r *recordingT) FailNow()              { r.failed = true }

func TestSampleMessage(t *testing.T) {
	tests := []struct{ format, want string }{
		{"plain", "plain"},
		{"unknown state %q%s", `unknown state "sample"Sample`},
		{"%d states × %d events", "7 states × 7 events"},
		{"100%% sure: %v", "100% sure: Sample"},
		{"%-8s|%5.2f|%[1]s", "Sample|1.5|Sample"},
		{"type %T", "type int"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, sampleMessage(tt.format), "%q", tt.format)
	}
}

func TestRulesTable(t *testing.T) {
	kebab := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, r := range rules {
		assert.Regexp(t, kebab, r.ID)
		assert.False(t, seen[r.ID], "rule id %s is used twice", r.ID)
		seen[r.ID] = true
		for name, text := range map[string]string{"Short": r.Short, "Full": r.Full, "Help": r.Help} {
			assert.NotEmpty(t, text, "%s.%s", r.ID, name)
			assert.True(t, strings.HasSuffix(text, "."), "%s.%s is a sentence ending with a period: %q", r.ID, name, text)
		}
		if r.ID != Unclassified {
			assert.NotEmpty(t, r.Patterns, "rule %s has no patterns", r.ID)
		}
	}
	assert.True(t, seen[Unclassified])
	ids := []string{}
	for _, r := range Rules() {
		ids = append(ids, r.ID)
	}
	assert.True(t, slices.IsSorted(ids), "Rules is sorted by id")
	assert.Len(t, ids, len(rules))
}

func TestClassify(t *testing.T) {
	tests := []struct{ msg, want string }{
		{`unknown state "Opne" (did you mean "Open"?)`, "unknown-name"},
		{`unknown key "machin" (did you mean "machine"?)`, "unknown-key"},
		{`state Open does not handle event Push: add a transition, or list Push under the state's ignore or reject`, "unhandled-pair"},
		{`action Unused is never emitted`, "unused-declaration"},
		{`invalid YAML: did not find expected key`, "yaml-syntax"},
		{`guard IsBig reads Size, but only some of A, B have Size (A has it; B has not), so the row cannot read it from all of them: give the states the field, or write rows of their own`, "field-not-available"},
		{`something fsmgen never says`, Unclassified},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Classify(tt.msg), "%q", tt.msg)
	}
	var l List
	l.Errorf(Pos{File: "a.yaml"}, "unknown event %q", "Psh")
	l.Warnf(Pos{File: "a.yaml"}, "import %s is not used by any field type", "time")
	assert.Equal(t, []string{"unknown-name", "unused-declaration"}, []string{l[0].Rule, l[1].Rule})
}

// formatCall is one call that reports a diagnostic with a constant format.
type formatCall struct {
	pos      token.Position
	severity Severity
	format   string
}

// reporter says where a function that reports a diagnostic takes its
// format, and with which severity.
type reporter struct {
	formatArg int
	severity  Severity
}

// findFormatCalls returns the diagnostic calls in the non-test Go files of
// dir. It starts from List.Errorf and List.Warnf and adds, until nothing
// changes, every function that passes its own format parameter on to a
// reporter (a wrapper such as func (b *builder) errorf). Calls are matched
// by function name; a call through a package name (fmt.Errorf) is not a
// diagnostic. A format that is not a constant string fails t.
func findFormatCalls(t testing.TB, dir string) []formatCall {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var files []*ast.File
	consts := map[string]ast.Expr{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						consts[name.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	require.NotEmpty(t, files, "no Go files in %s", dir)

	reporters := map[string]reporter{"Errorf": {1, Error}, "Warnf": {1, Warning}}
	for changed := true; changed; {
		changed = false
		for _, f := range files {
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				if _, known := reporters[fd.Name.Name]; known {
					continue
				}
				params := paramNames(fd)
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					rep, ok := calledReporter(f, call, reporters)
					if !ok || rep.formatArg >= len(call.Args) {
						return true
					}
					if id, ok := call.Args[rep.formatArg].(*ast.Ident); ok {
						if i := slices.Index(params, id.Name); i >= 0 {
							reporters[fd.Name.Name] = reporter{i, rep.severity}
							changed = true
						}
					}
					return true
				})
			}
		}
	}

	var calls []formatCall
	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if ok {
				if _, wrapper := reporters[fd.Name.Name]; wrapper {
					continue // a wrapper forwards its caller's format
				}
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				rep, ok := calledReporter(f, call, reporters)
				if !ok {
					return true
				}
				pos := fset.Position(call.Pos())
				if rep.formatArg >= len(call.Args) {
					t.Errorf("%s: call has no format argument", pos)
					return true
				}
				format, ok := constString(call.Args[rep.formatArg], consts)
				if !ok {
					t.Errorf("%s: the format of a diagnostic must be a constant string, so that its rule can be checked", pos)
					return true
				}
				calls = append(calls, formatCall{pos: pos, severity: rep.severity, format: format})
				return true
			})
		}
	}
	return calls
}

// paramNames returns the names of fd's parameters, in order.
func paramNames(fd *ast.FuncDecl) []string {
	var names []string
	for _, field := range fd.Type.Params.List {
		if len(field.Names) == 0 {
			names = append(names, "_")
		}
		for _, n := range field.Names {
			names = append(names, n.Name)
		}
	}
	return names
}

// calledReporter returns the reporter call calls, if any. A call through an
// imported package's name (fmt.Errorf, errors.Errorf) is not one.
func calledReporter(f *ast.File, call *ast.CallExpr, reporters map[string]reporter) (reporter, bool) {
	var name string
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		name = fun.Name
	case *ast.SelectorExpr:
		if x, ok := fun.X.(*ast.Ident); ok && importsName(f, x.Name) {
			return reporter{}, false
		}
		name = fun.Sel.Name
	default:
		return reporter{}, false
	}
	rep, ok := reporters[name]
	return rep, ok
}

// importsName reports whether f imports a package under name.
func importsName(f *ast.File, name string) bool {
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == name {
			return true
		}
	}
	return false
}

// constString evaluates a string constant expression: literals, the
// package's own constants, parentheses and +.
func constString(e ast.Expr, consts map[string]ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return constString(e.X, consts)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := constString(e.X, consts)
		y, ok2 := constString(e.Y, consts)
		return x + y, ok1 && ok2
	case *ast.Ident:
		if v, ok := consts[e.Name]; ok {
			delete(consts, e.Name) // no endless loop on a bad constant
			s, ok := constString(v, consts)
			consts[e.Name] = v
			return s, ok
		}
	}
	return "", false
}

// verbRE is a fmt verb: flags, an optional argument index, width and
// precision, then the verb letter.
var verbRE = regexp.MustCompile(`%[-+# 0]*(\[\d+\])?(\d+|\*)?(\.(\d+|\*)?)?[a-zA-Z%]`)

// sampleMessage turns a format string into a message such as fsmgen would
// print: each verb becomes a sample value of its kind, %% a percent sign.
func sampleMessage(format string) string {
	return verbRE.ReplaceAllStringFunc(format, func(v string) string {
		switch v[len(v)-1] {
		case '%':
			return "%"
		case 'q':
			return `"sample"`
		case 'd', 'x', 'X', 'o', 'b', 'c':
			return "7"
		case 'f', 'g', 'e':
			return "1.5"
		case 'T':
			return "int"
		case 't':
			return "true"
		}
		return "Sample"
	})
}
