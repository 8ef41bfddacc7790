package fsm

import (
	"go/token"
	"go/types"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// The limits on a machine's size. Beyond them Build stops with an error
// instead of spending memory on a table nobody could review.
const (
	MaxStates = 10_000
	MaxEvents = 10_000
	// MaxPairs bounds states × events, the pairs the checker must resolve.
	MaxPairs = 4_000_000
)

// Build checks a parsed spec and resolves it into a Machine. It returns
// every problem found, sorted; the Machine is nil when there are errors.
// env says what Build may know of the Go packages around the spec; the
// zero Env knows none (field types may then name predeclared types, the
// spec's own and imported packages' names, unchecked).
func Build(f *spec.File, env Env) (*Machine, diag.List) {
	if hasParallel(f.States) {
		return buildParallel(f, env)
	}
	return build(f, env, nil)
}

// build is Build, for a machine or, with par, a machine with parallel
// states or one region of one (see parallel.go).
func build(f *spec.File, env Env, par *parHook) (*Machine, diag.List) {
	b := &builder{f: f, env: env, par: par, m: &Machine{SpecFile: filepath.Base(f.Path), Source: env.Source, ImportPath: env.PackagePath}}
	if b.m.Source == "" {
		b.m.Source = b.m.SpecFile
	}
	b.header()
	b.names = b.initialisms()
	b.decls()
	b.funcs()
	b.types()
	if !b.limits() {
		b.diags.Sort()
		return nil, b.diags
	}
	b.transitions()
	b.hooks()
	b.behavior()
	b.stateLists()
	b.goNames()
	// Totality, field flow, reachability and unused declarations are only
	// worth reporting once every name resolves; before that they are noise.
	if !b.diags.HasErrors() {
		b.renames()
		b.data()
		b.accessors()
		b.timerArgs()
		b.cells()
		b.resolve()
		b.start()
		b.enters()
		b.leaves()
		b.graph()
		b.deferral()
		b.unused()
	}
	if !b.diags.HasErrors() {
		// The ways through transient states end only once they cannot
		// loop, which graph checks.
		b.ways()
		b.paths()
		b.m.traceWays()
		b.m.holds()
		b.m.witnesses()
		b.shape()
		b.examples()
		b.jsonShapes(b.m)
	}
	b.diags.Sort()
	if b.diags.HasErrors() {
		return nil, b.diags
	}
	return b.m, b.diags
}

type builder struct {
	f     *spec.File
	env   Env
	m     *Machine
	diags diag.List
	// par is what the build knows of parallel states; nil without them.
	par *parHook
	// edgeBuf holds the edges of the node the path search is at (edges).
	edgeBuf []edge

	states   map[string]*State
	events   map[string]*Event
	actions  map[string]*Action
	fnByName map[string]*Func
	imports  map[string]*importUse
	// typeUses are the field types to resolve once every name is known.
	typeUses []typeUse
	// rows[state][event] are the rows one entry gives a pair (rows[s] is
	// allocated for states that have rows); wild[event] is the "*" row of
	// an event; eventless[state] are the eventless rows of a transient
	// state.
	rows      [][]*pending
	wild      []*pending
	eventless []*pending
	// parDone[state] is the done transition of a parallel state, apart
	// from its eventless rows (a parallel state may wait on those too).
	parDone map[*State]*pending
	// around[leaf] are the eventless rows of the composite states around
	// a leaf that waits on them (see compositeWaits), innermost first.
	around map[*State][]aroundRows
	// groupDone are the done transitions of the parallel states nested
	// as regions (see groupDoneRows).
	groupDone []groupPending
	// shared[composite][event] is the row of a composite state for an
	// event (shared[c] is allocated for composites that have rows).
	shared map[*State][]*pending
	// other holds the "ignore: *" and "reject: *" of the states.
	other map[*State]otherList
	// sharedCells are the shared cells made so far, by owner and event;
	// users lists the states that leave their event to each, and cellOf
	// the cell of every rule.
	sharedCells map[sharedKey]*Cell
	users       map[*Cell][]*State
	cellOf      map[*Rule]*Cell
	// outcomeOf is the spec's outcome of each rule a transition, a branch
	// or a timer gives: its set: and with: are resolved with its flow.
	outcomeOf map[*Rule]*spec.Outcome
	// pendingEx are the examples of each outcome, with its rules.
	pendingEx []*pendingExamples
	// specOf maps each state to its spec entry; all lists every state,
	// composite or leaf, depth first.
	specOf map[*State]*spec.State
	all    []*State
	// pkgs are the imported packages loaded to check field types.
	pkgs map[string]*types.Package
	// names makes Go names of spec names, with the spec's initialisms.
	names Namer
}

// sharedKey identifies a shared cell: its owner (nil for "*") and event.
type sharedKey struct {
	owner *State
	event *Event
}

type importUse struct {
	spec.Import
	used bool
}

// pending is the rules one transition entry, or one list entry, gives a
// (state, event) pair or, from "*", an event.
type pending struct {
	rules []*Rule
	pos   diag.Pos
}

func (b *builder) errorf(pos diag.Pos, format string, args ...any) {
	b.diags.Errorf(pos, format, args...)
}

func (b *builder) header() {
	f, m := b.f, b.m
	m.Name = f.Machine.Value
	if f.Machine.Set && !identRE.MatchString(m.Name) {
		b.errorf(f.Machine.Pos, "machine name %q is not an identifier: use letters, digits and underscores, starting with a letter", m.Name)
	}
	m.Package = f.Package.Value
	if f.Package.Set {
		b.packageName(f.Package)
	}
	m.Doc = strings.TrimSpace(f.Doc.Value)
	for _, br := range f.Breaks {
		m.Breaks = append(m.Breaks, Break{Change: strings.Join(strings.Fields(br.Change.Value), " "), Why: strings.TrimSpace(br.Why.Value), Pos: br.Pos})
	}
	b.imports = map[string]*importUse{}
	for _, imp := range f.Imports {
		alias, p := imp.Alias.Value, imp.Path.Value
		switch {
		case token.IsKeyword(alias):
			b.errorf(imp.Alias.Pos, "import alias %q is a Go keyword", alias)
		case !token.IsIdentifier(alias) || alias == "_":
			b.errorf(imp.Alias.Pos, "import alias %q is not a Go identifier", alias)
		case alias == m.Package && !b.self(p):
			b.errorf(imp.Alias.Pos, "import alias %q is the generated package's own name: choose another alias", alias)
		case !validImportPath(p):
			b.errorf(imp.Path.Pos, "import path %q is not a valid Go import path", p)
		default:
			b.imports[alias] = &importUse{Import: imp}
			m.Imports = append(m.Imports, Import{Alias: alias, Path: p})
		}
	}
	for i, imp := range m.Imports {
		m.Imports[i].GoName = importName(imp.Alias, aliasesBut(m.Imports, i))
	}
	slices.SortFunc(m.Imports, func(a, c Import) int { return strings.Compare(a.Alias, c.Alias) })
	m.Output = Output{
		GoDir:       b.outPath(f.Output.Go),
		Diagram:     b.outPath(f.Output.Diagram),
		Table:       b.outPath(f.Output.Table),
		TemporalDir: b.outPath(f.Output.Temporal),
	}
}

// outPath checks an output path: relative to the spec, slash-separated.
func (b *builder) outPath(s spec.String) string {
	if !s.Set {
		return ""
	}
	p := s.Value
	switch {
	case p == "":
		b.errorf(s.Pos, "output path is empty")
	case path.IsAbs(p) || filepath.IsAbs(p) || strings.Contains(p, `\`):
		b.errorf(s.Pos, "output path %q must be relative to the spec file and use forward slashes", p)
	case strings.TrimLeft(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") != "":
		b.errorf(s.Pos, "output path %q may use only letters, digits, '.', '_', '-' and '/'", p)
	default:
		return path.Clean(p)
	}
	return ""
}

// packageName checks the generated package's name. Any Go identifier
// but the blank one is a package name Go accepts, underscores included
// (h_base); fsmgen refuses capitals too, which Go accepts but no Go
// package uses: the package's name is what its users write before every
// name of it, and in capitals it reads as a type (Door.New).
func (b *builder) packageName(s spec.String) {
	name := s.Value
	switch {
	case token.IsKeyword(name):
		b.errorf(s.Pos, "package name %q is a Go keyword", name)
	case !token.IsIdentifier(name) || name == "_":
		b.errorf(s.Pos, "package name %q is not a Go identifier: use lower-case letters, digits and underscores, starting with a letter", name)
	case strings.ToLower(name) != name:
		b.errorf(s.Pos, "package name %q has capitals: Go package names are lower case (%s), as they are written before every name of the package", name, strings.ToLower(name))
	}
}

func validImportPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		return false
	}
	for _, r := range p {
		if r <= ' ' || strings.ContainsRune("!\"#$%&'()*,:;<=>?[\\]^`{|}", r) {
			return false
		}
	}
	for _, part := range strings.Split(p, "/") {
		if part == "." || part == ".." {
			return false
		}
	}
	return true
}

func names[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
