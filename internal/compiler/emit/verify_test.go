package emit_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// specNames returns the top-level names a machine's spec gives its
// generated package: the types of its states, events and actions, and
// their kind constants. Everything else the package declares must be in
// fsm.Generated.
func specNames(m *fsm.Machine) []string {
	var out []string
	add := func(d *fsm.Decl) { out = append(out, d.GoName, d.KindName) }
	for _, s := range m.States {
		add(&s.Decl)
	}
	for _, e := range m.Events {
		add(&e.Decl)
	}
	for _, a := range m.Actions {
		add(&a.Decl)
	}
	for _, a := range m.Accessors {
		out = append(out, a.Of, a.With)
	}
	for _, s := range m.RegionLeaves() {
		out = append(out, s.KindName) // a region's leaves have kinds, not types
	}
	return out
}

// declared lists the names of the top-level declarations of a parsed
// file (types, functions, variables and constants; not methods).
func declared(f *ast.File) []string {
	var got []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				got = append(got, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					got = append(got, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							got = append(got, n.Name)
						}
					}
				}
			}
		}
	}
	sort.Strings(got)
	return got
}

// verifyGo checks a machine's generated Go: both files parse, the files
// declare every name the spec implies and nothing but those and the names
// of fsm.Generated (the one list the checker refuses spec names from),
// every comment is a plain // line that cannot be a directive, the imports
// are the standard ones plus the spec's, and the package type-checks.
func verifyGo(m *fsm.Machine, files []emit.File) error {
	fset := token.NewFileSet()
	var code *ast.File
	allowedNames := map[string]bool{}
	for _, n := range append(specNames(m), fsm.Generated...) {
		allowedNames[n] = true
	}
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".go") {
			continue
		}
		parsed, err := parser.ParseFile(fset, f.Path, f.Content, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("generated %s does not parse: %w", f.Path, err)
		}
		external := strings.HasSuffix(f.Path, "_examples_gen_test.go") && !m.ExamplesInPackage
		if want := m.Package; parsed.Name.Name != want && !(external && parsed.Name.Name == want+"_test") {
			return fmt.Errorf("%s: package %s, want %s", f.Path, parsed.Name.Name, want)
		}
		if !strings.HasPrefix(string(f.Content), "// "+emit.Header+"\n") {
			return fmt.Errorf("%s: first line is not the generated-code header", f.Path)
		}
		for _, cg := range parsed.Comments {
			for _, c := range cg.List {
				if c.Text != "//" && !strings.HasPrefix(c.Text, "// ") {
					return fmt.Errorf("%s:%s: comment %q is not a plain // line", f.Path, fset.Position(c.Pos()), c.Text)
				}
				if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(c.Text, "//")), "+build") {
					return fmt.Errorf("%s:%s: comment %q reads as a build constraint", f.Path, fset.Position(c.Pos()), c.Text)
				}
			}
		}
		for _, name := range declared(parsed) {
			if !allowedNames[name] {
				return fmt.Errorf("%s declares %s, which is neither derived from the spec nor listed in fsm.Generated", f.Path, name)
			}
		}
		if strings.HasSuffix(f.Path, "_gen.go") {
			code = parsed
		}
	}
	if code == nil {
		return fmt.Errorf("no generated code file")
	}
	for _, name := range specNames(m) {
		if !slices.Contains(declared(code), name) {
			return fmt.Errorf("the generated code does not declare %s", name)
		}
	}
	allowed := map[string]bool{"github.com/fsmgen/fsmgen/runtime/fsmrt": true}
	if m.Regional() {
		allowed["fmt"] = true // the errors of a parallel state's regions: see regionPut
	}
	if m.ConfigDefers() {
		allowed["errors"], allowed["slices"] = true, true // recall asks the configuration: see genRegionRecall
	}
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

// isStd reports whether an import path is of the standard library: its
// first element has no dot.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// stdEnv is the checker's environment in these tests: the standard
// library's packages, from source.
func stdEnv() fsm.Env {
	return fsm.Env{Import: func(path string) (*types.Package, error) {
		if !isStd(path) {
			return nil, fmt.Errorf("only the standard library is available to emit's tests")
		}
		stdMu.Lock()
		defer stdMu.Unlock()
		stdOnce.Do(func() { stdImporter = importer.ForCompiler(token.NewFileSet(), "source", nil) })
		return stdImporter.Import(path)
	}}
}

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
	for _, fn := range append(append([]*fsm.Func(nil), m.Guards...), m.Effects...) {
		fields = append(append(fields, fn.Reads...), fn.Sets...)
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
		if isStd(path) {
			continue // the real package, from source
		}
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
				if types.Universe.Lookup(n.Name) == nil && !generated[n.Name] {
					local[n.Name] = true
				}
			}
			return true
		})
	}
	files := []*ast.File{code}
	if len(local) > 0 {
		src := "package " + m.Package + "\n"
		for name := range local {
			src += "type " + name + " struct{}\n"
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

// mermaidLine is every line fsmgen may write in a diagram. An edge's
// label is names and punctuation, and the string constants of set: between
// typographic quotes, with none of the characters Mermaid gives a meaning.
var mermaidLine = regexp.MustCompile(`^(%% [^\n]*|stateDiagram-v2|( {4})+(state [A-Za-z][A-Za-z0-9_]* (<<choice>>|\{)|state "H\*?" as [A-Za-z][A-Za-z0-9_]*_history|\}|--|[A-Za-z][A-Za-z0-9_]*|note right of [A-Za-z][A-Za-z0-9_]* : [A-Za-z0-9_ ,{}/]+(<br/>[A-Za-z0-9_ ,{}/]+)*|(\[\*\]|[A-Za-z][A-Za-z0-9_]*) --> ([A-Za-z][A-Za-z0-9_]*|\[\*\])( : ` + edgeLabel + `(<br/>` + edgeLabel + `)*)?))$`)

// edgeLabel is the label of a rule on an edge.
const edgeLabel = `([A-Za-z0-9_ ,.()\[\]/=+-]|“[^“”\n:;{}\[\]<>"'#%|` + "`" + `]*”)+`

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
			want := 1 + len(m.Composites) // the initial [*] of the machine and of each composite state
			merged := map[[2]string]bool{}
			rows := map[string]bool{} // a row with several events is drawn once from a state
			count := func(from *fsm.State, rules []*fsm.Rule) {
				for _, r := range rules {
					if r.Leaves != nil && r.Leaves.Event == nil {
						r = r.Leaves // an eventless branch that leaves a parallel state, drawn from its source
					}
					from := from
					if r.Group != nil {
						from = r.Group // a nested parallel state's rule, drawn from it
					}
					if r.Source != nil {
						from = r.Source // a rule that leaves a parallel state, drawn from its source
						if r.Done != nil {
							from = r.Done // a done transition's, from its composite state
						}
					}
					if r.Around != nil {
						from = r.Around // a composite state's eventless row, drawn once from it
					}
					to := r.Target
					if to == nil {
						to = from
					}
					toName := to.Name
					if r.History != nil {
						toName = r.History.Name + "_history" // the history's pseudostate
					}
					row := fmt.Sprintf("%s %s %s", from.Name, toName, r.Pos)
					if rows[row] {
						continue
					}
					rows[row] = true
					pair := [2]string{from.Name, toName}
					one := to == from || from.Composite() || to.Composite() || r.History != nil // one edge per pair
					if r.Kind == fsm.Transition && (!one || !merged[pair]) {
						want++
						merged[pair] = merged[pair] || one
					}
				}
			}
			for _, s := range m.States {
				if s.Terminal || s.Final {
					want++ // S --> [*]
				}
				var rules []*fsm.Rule
				if s.Choice != nil && s.Completes != nil {
					count(s.Completes, s.Choice.Rules) // done, drawn from the composite state
				} else if s.Choice != nil {
					rules = s.Choice.Rules
				}
				if s.Completion != nil {
					rules = append(rules, s.Completion.Rules...) // a parallel state's done
				}
				for _, g := range s.Nested() {
					if g.Completion != nil {
						rules = append(rules, g.Completion.Rules...) // a nested parallel state's done
					}
				}
				for _, c := range s.Handles {
					rules = append(rules, c.Rules...)
				}
				for _, c := range s.Inherited {
					if c.Owner == nil {
						rules = append(rules, c.Rules...)
					}
				}
				count(s, rules)
			}
			for _, c := range m.Shared {
				if c.Owner != nil {
					count(c.Owner, c.Rules)
				}
			}
			for _, t := range m.Timers {
				count(t.State, t.Cell.Rules)
			}
			// A region's initial [*] in its section, and its composite
			// states'; its leaves' rules, and its composite states' once.
			shared := map[*fsm.Cell]bool{}
			var sharedCells []*fsm.Cell
			want += len(m.Groups()) // a nested parallel state's [*] in its section
			for _, reg := range m.Regions {
				want += 1 + len(reg.Composites)
				for _, s := range reg.Leaves {
					if s.Final {
						want++ // S --> [*], in its region
					}
					if s.Choice != nil && s.Completes != nil {
						count(s.Completes, s.Choice.Rules) // done inside the region, drawn from the composite state
					} else if s.Choice != nil {
						count(s, s.Choice.Rules) // a transient state's eventless rules, from its choice
					}
					if s.Completion != nil {
						count(s, s.Completion.Rules) // a parallel state's done, inside the region
					}
					for _, c := range s.Handles {
						count(s, c.Rules)
					}
					for _, c := range s.Inherited {
						if c.Owner != nil && !shared[c] {
							shared[c] = true
							sharedCells = append(sharedCells, c)
						}
					}
				}
			}
			for _, c := range sharedCells {
				count(c.Owner, c.Rules)
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
