package emit_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/printer"
	"go/token"
	"go/types"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fsmgen/fsmgen/internal/emit"
	"github.com/fsmgen/fsmgen/internal/fsm"
)

// expectedDecls lists the top-level declarations the generated Go file of
// m must have, and nothing else: "type X", "func X", "method T.X",
// "const X", "var X".
func expectedDecls(m *fsm.Machine) []string {
	var want []string
	add := func(format string, args ...any) { want = append(want, fmt.Sprintf(format, args...)) }
	for _, k := range []string{"StateKind", "EventKind", "ActionKind", "RuleKind"} {
		add("type %s", k)
		add("method %s.String", k)
	}
	for _, t := range []string{"State", "Event", "Action", "Rule", "RejectedError", "fsmStates", "fsmActions", "Machine", "Observer", "Step"} {
		add("type %s", t)
	}
	if len(m.Guards)+len(m.Effects) > 0 {
		add("type Behavior")
	}
	for _, c := range []string{"RuleTransition", "RuleIgnore", "RuleReject"} {
		add("const %s", c)
	}
	decls := func(ds []*fsm.Decl, marker string) {
		for _, d := range ds {
			add("type %s", d.GoName)
			add("const %s", d.KindName)
			add("method %s.Kind", d.GoName)
			add("method %s.%s", d.GoName, marker)
			add("method %s.MarshalJSON", d.GoName)
		}
	}
	var ss, es, as []*fsm.Decl
	for _, s := range m.States {
		ss = append(ss, &s.Decl)
	}
	for _, e := range m.Events {
		es = append(es, &e.Decl)
	}
	for _, a := range m.Actions {
		as = append(as, &a.Decl)
	}
	decls(ss, "isState")
	decls(es, "isEvent")
	decls(as, "isAction")
	add("var fsmRules")
	add("var ErrRejected")
	for _, f := range []string{"Rules", "New", "Restore", "UnmarshalState", "UnmarshalEvent", "UnmarshalAction", "fsmDecodeKind", "fsmDecodeAs", "fsmAsValue", "fsmAsPointer"} {
		add("func %s", f)
	}
	add("method RejectedError.Error")
	add("method RejectedError.Unwrap")
	for _, f := range []string{"State", "Kind", "SetObserver", "HandleEvent", "step", "ignore", "reject", "unhandled"} {
		add("method Machine.%s", f)
	}
	if m.Behavior != "" {
		add("method Machine.handleVia")
	}
	refuses := false
	for _, s := range m.States {
		for _, c := range s.Cells {
			refuses = refuses || len(c.Rules) == 1 && c.Rules[0].Kind != fsm.Transition
		}
	}
	if refuses {
		add("method Machine.refuse")
	}
	// nilEvent exists when some rule reads its event: a guard or effect
	// that takes it, or a field carried over from it.
	reads := false
	for _, r := range m.Rules {
		if r.Event == nil || len(r.Event.Fields) == 0 || r.Kind != fsm.Transition && r.Guard == nil {
			continue
		}
		reads = reads || r.Guard != nil && r.Guard.Sig.Event != nil || r.Effect != nil && r.Effect.Sig.Event != nil
		for _, a := range append(append([]fsm.Assign(nil), r.ToInit...), r.ActInit...) {
			reads = reads || a.Source == fsm.FromEvent
		}
	}
	if reads {
		add("method Machine.nilEvent")
	}
	for _, s := range m.States {
		if s.Choice != nil {
			add("method Machine.leave%s", s.GoName)
			if m.Behavior != "" {
				add("method Machine.leave%sVia", s.GoName)
			}
		}
	}
	sort.Strings(want)
	return want
}

// declared lists the top-level declarations of a parsed file in the form
// expectedDecls uses.
func declared(f *ast.File) []string {
	var got []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				got = append(got, "func "+d.Name.Name)
				continue
			}
			t := d.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			got = append(got, "method "+t.(*ast.Ident).Name+"."+d.Name.Name)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					got = append(got, "type "+s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						got = append(got, d.Tok.String()+" "+n.Name)
					}
				}
			}
		}
	}
	sort.Strings(got)
	return got
}

// verifyGo checks a machine's generated Go: both files parse, the package
// declares exactly what the spec implies, every comment is a plain //
// line that cannot be a directive, the imports are the standard ones plus
// the spec's, and the package type-checks.
func verifyGo(m *fsm.Machine, files []emit.File) error {
	fset := token.NewFileSet()
	var code *ast.File
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".go") {
			continue
		}
		parsed, err := parser.ParseFile(fset, f.Path, f.Content, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("generated %s does not parse: %w", f.Path, err)
		}
		if parsed.Name.Name != m.Package {
			return fmt.Errorf("%s: package %s, want %s", f.Path, parsed.Name.Name, m.Package)
		}
		if !strings.HasPrefix(string(f.Content), "// "+emit.Header+"\n") {
			return fmt.Errorf("%s: first line is not the generated-code header", f.Path)
		}
		for _, cg := range parsed.Comments {
			for _, c := range cg.List {
				if c.Text != "//" && !strings.HasPrefix(c.Text, "// ") {
					return fmt.Errorf("%s:%s: comment %q is not a plain // line", f.Path, fset.Position(c.Pos()), c.Text)
				}
			}
		}
		if strings.HasSuffix(f.Path, "_gen.go") {
			code = parsed
		}
	}
	if code == nil {
		return fmt.Errorf("no generated code file")
	}
	if got, want := declared(code), expectedDecls(m); !slices.Equal(got, want) {
		return fmt.Errorf("declarations differ from the spec's:\n got %q\nwant %q", got, want)
	}
	allowed := map[string]bool{"encoding/json": true, "errors": true, "fmt": true, "slices": true, "strconv": true}
	for _, imp := range m.Imports {
		allowed[imp.Path] = true
	}
	for _, imp := range code.Imports {
		if p := strings.Trim(imp.Path.Value, `"`); !allowed[p] {
			return fmt.Errorf("unexpected import %s", p)
		}
	}
	return typeCheck(fset, m, code)
}

var (
	stdOnce     sync.Once
	stdImporter types.Importer
)

// fakeImporter gives each of the spec's import paths a package with a
// named struct type for every name the spec's fields use from it, and
// reads the standard library from source.
type fakeImporter struct {
	fake map[string]*types.Package
}

func (fi fakeImporter) Import(path string) (*types.Package, error) {
	if p, ok := fi.fake[path]; ok {
		return p, nil
	}
	stdOnce.Do(func() { stdImporter = importer.ForCompiler(token.NewFileSet(), "source", nil) })
	return stdImporter.Import(path)
}

var stdMu sync.Mutex

func typeCheck(fset *token.FileSet, m *fsm.Machine, code *ast.File) error {
	fake := map[string]*types.Package{}
	names := map[string]map[string]bool{}
	aliasPath := map[string]string{}
	for _, imp := range m.Imports {
		aliasPath[imp.Alias] = imp.Path
		names[imp.Path] = map[string]bool{}
	}
	var fields []*fsm.Field
	for _, s := range m.States {
		fields = append(fields, s.Fields...)
	}
	for _, e := range m.Events {
		fields = append(fields, e.Fields...)
	}
	for _, a := range m.Actions {
		fields = append(fields, a.Fields...)
	}
	for _, f := range fields {
		expr, err := parser.ParseExpr(f.Type)
		if err != nil {
			return fmt.Errorf("field type %q: %w", f.Type, err)
		}
		ast.Inspect(expr, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					names[aliasPath[id.Name]][sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	for alias, path := range aliasPath {
		ns := names[path]
		pkg := types.NewPackage(path, alias)
		for n := range ns {
			tn := types.NewTypeName(token.NoPos, pkg, n, nil)
			types.NewNamed(tn, types.NewStruct(nil, nil), nil)
			pkg.Scope().Insert(tn)
		}
		pkg.MarkComplete()
		fake[path] = pkg
	}
	// Unqualified names that are neither predeclared nor generated stand
	// for types written by hand in the package: declare them.
	generated := map[string]bool{}
	for _, d := range declared(code) {
		generated[d] = true
	}
	local := map[string]bool{}
	for _, f := range fields {
		expr, _ := parser.ParseExpr(f.Type)
		ast.Inspect(expr, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				return false
			case *ast.Ident:
				if types.Universe.Lookup(n.Name) == nil && !generated["type "+n.Name] {
					local[n.Name] = true
				}
			}
			return true
		})
	}
	files := []*ast.File{code}
	if len(local) > 0 || m.Behavior != "" {
		src := "package " + m.Package + "\n"
		for name := range local {
			if name != m.Behavior {
				src += "type " + name + " struct{}\n"
			}
		}
		if m.Behavior != "" {
			methods, err := behaviorMethods(fset, code, m.Behavior)
			if err != nil {
				return err
			}
			src += "type " + m.Behavior + " struct{}\n" + methods
		}
		handWritten, err := parser.ParseFile(fset, "handwritten.go", src, 0)
		if err != nil {
			return fmt.Errorf("declare local types: %w", err)
		}
		files = append(files, handWritten)
	}
	stdMu.Lock() // the source importer is not safe for concurrent use
	defer stdMu.Unlock()
	conf := types.Config{Importer: fakeImporter{fake: fake}}
	if _, err := conf.Check(m.Package, fset, files, nil); err != nil {
		return fmt.Errorf("generated code does not type-check: %w", err)
	}
	return nil
}

// behaviorMethods writes, for the behaviour type t that the spec names,
// a method for each method of the generated Behavior interface, so that
// the generated code's direct calls type-check.
func behaviorMethods(fset *token.FileSet, code *ast.File, t string) (string, error) {
	for _, d := range code.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		ts := gd.Specs[0].(*ast.TypeSpec)
		it, ok := ts.Type.(*ast.InterfaceType)
		if ts.Name.Name != "Behavior" || !ok {
			continue
		}
		var b strings.Builder
		for _, meth := range it.Methods.List {
			var sig bytes.Buffer
			if err := printer.Fprint(&sig, fset, meth.Type); err != nil {
				return "", err
			}
			body := "{}"
			if meth.Type.(*ast.FuncType).Results != nil {
				body = "{ return false }"
			}
			fmt.Fprintf(&b, "func (*%s) %s%s %s\n", t, meth.Names[0].Name, strings.TrimPrefix(sig.String(), "func"), body)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("behavior %s is named, but the generated code has no Behavior interface", t)
}

// mermaidLine is every line fsmgen may write in a diagram.
var mermaidLine = regexp.MustCompile(`^(%% [^\n]*|stateDiagram-v2|    state [A-Za-z][A-Za-z0-9_]* <<choice>>|    (\[\*\]|[A-Za-z][A-Za-z0-9_]*) --> ([A-Za-z][A-Za-z0-9_]*|\[\*\])( : [A-Za-z0-9_ \[\]/]+(<br/>[A-Za-z0-9_ \[\]/]+)*)?)$`)

// verifyDocs checks that no spec text changed the structure of the
// diagram or the table: every diagram line fits the grammar fsmgen emits,
// the diagram has one edge per transition (self-loops merged), and every
// table row has exactly its table's columns.
func verifyDocs(m *fsm.Machine, files []emit.File) error {
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.Path, ".mmd"):
			lines := strings.Split(strings.TrimSuffix(string(f.Content), "\n"), "\n")
			edges := 0
			for i, l := range lines {
				if !mermaidLine.MatchString(l) {
					return fmt.Errorf("%s:%d: unexpected diagram line %q", f.Path, i+1, l)
				}
				if strings.Contains(l, " --> ") {
					edges++
				}
			}
			want := 1 // the initial [*]
			loops := map[*fsm.State]bool{}
			for _, r := range m.Rules {
				if r.Kind == fsm.Transition && (!r.Stays() || !loops[r.From]) {
					want++
					loops[r.From] = loops[r.From] || r.Stays()
				}
			}
			for _, s := range m.States {
				if s.Terminal {
					want++
				}
			}
			if edges != want {
				return fmt.Errorf("%s: %d edges, want %d", f.Path, edges, want)
			}
		case strings.HasSuffix(f.Path, ".md"):
			cols := 0
			for i, l := range strings.Split(string(f.Content), "\n") {
				if !strings.HasPrefix(l, "|") {
					cols = 0
					continue
				}
				n := cells(l)
				if cols == 0 {
					cols = n
				} else if n != cols {
					return fmt.Errorf("%s:%d: row has %d cells, the table %d: %q", f.Path, i+1, n, cols, l)
				}
			}
			for i, l := range strings.Split(string(f.Content), "\n")[1:] {
				for j := 0; j < len(l); j++ {
					if l[j] == '\\' {
						j++
					} else if l[j] == '<' {
						return fmt.Errorf("%s:%d: raw HTML in the table: %q", f.Path, i+2, l)
					}
				}
			}
		}
	}
	return nil
}

// cells counts the cells of a Markdown table row: unescaped pipes less one.
func cells(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n - 1
}
