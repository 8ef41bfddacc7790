package fsm

import (
	"fmt"
	"go/token"
	"go/types"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/suggest"
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
	b := &builder{f: f, env: env, m: &Machine{SpecFile: filepath.Base(f.Path), Source: env.Source, ImportPath: env.PackagePath}}
	if b.m.Source == "" {
		b.m.Source = b.m.SpecFile
	}
	b.header()
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
		b.timerArgs()
		b.cells()
		b.resolve()
		b.start()
		b.graph()
		b.unused()
	}
	if !b.diags.HasErrors() {
		// The ways through transient states end only once they cannot
		// loop, which graph checks.
		b.ways()
		b.paths()
		b.m.traceWays()
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
	// pendingEx are the examples of each outcome, with its rules.
	pendingEx []*pendingExamples
	// specOf maps each state to its spec entry; all lists every state,
	// composite or leaf, depth first.
	specOf map[*State]*spec.State
	all    []*State
	// pkgs are the imported packages loaded to check field types.
	pkgs map[string]*types.Package
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
		if token.IsKeyword(m.Package) {
			b.errorf(f.Package.Pos, "package name %q is a Go keyword", m.Package)
		} else if !packageName(m.Package) {
			b.errorf(f.Package.Pos, "package name %q is not a lower-case Go identifier", m.Package)
		}
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
		case alias == m.Package:
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
		GoDir:   b.outPath(f.Output.Go),
		Diagram: b.outPath(f.Output.Diagram),
		Table:   b.outPath(f.Output.Table),
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

func packageName(s string) bool {
	if s == "" || !token.IsIdentifier(s) {
		return false
	}
	return strings.ToLower(s) == s && !strings.Contains(s, "_")
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

// fields checks a list of typed fields: identifiers, reserved and
// duplicate names, and the syntax of their types. what names their owner
// in messages, e.g. "state" or "effect startTurn's reads".
func (b *builder) fields(what string, list []spec.Field) []*Field {
	var out []*Field
	byGo := map[string]*Field{}
	for _, sf := range list {
		fd := &Field{Name: sf.Name.Value, Pos: sf.Name.Pos, Type: sf.Type.Value, TypePos: sf.Type.Pos, Doc: strings.TrimSpace(sf.Doc.Value)}
		if !identRE.MatchString(fd.Name) {
			b.errorf(fd.Pos, "field name %q is not an identifier: use letters, digits and underscores, starting with a letter", fd.Name)
			continue
		}
		fd.GoName, fd.JSONName = GoName(fd.Name), SnakeName(fd.Name)
		fd.Param = ParamName(fd.Name, b.m.Imports)
		if fd.JSONName == "kind" {
			b.errorf(fd.Pos, "field name %q is reserved: \"kind\" tells the %ss apart in JSON", fd.Name, what)
			continue
		}
		if member, ok := Members[fd.GoName]; ok {
			b.errorf(fd.Pos, "field %q is %s in Go, which is %s: rename it", fd.Name, fd.GoName, member)
			continue
		}
		if prev, ok := byGo[fd.GoName]; ok {
			b.errorf(fd.Pos, "field %q and field %q (%s) are both %s in Go: rename one", fd.Name, prev.Name, prev.Pos, fd.GoName)
			continue
		}
		byGo[fd.GoName] = fd
		fd.RenamedFrom = b.oldNames("field "+fd.Name, fd.JSONName, sf.RenamedFrom)
		if b.parseType(sf.Type) {
			fd.Type = normaliseType(fd.Type)
			fd.GoType = b.goCode(fd.Type)
		}
		out = append(out, fd)
	}
	return out
}

func (b *builder) decl(kind string, name, doc spec.String, fields []spec.Field, renamed []spec.String, index int) Decl {
	d := Decl{Name: name.Value, Pos: name.Pos, Index: index, Doc: strings.TrimSpace(doc.Value)}
	if !identRE.MatchString(name.Value) {
		b.errorf(name.Pos, "%s name %q is not an identifier: use letters, digits and underscores, starting with a letter", kind, name.Value)
		return d
	}
	d.GoName = GoName(name.Value)
	d.Snake = SnakeName(name.Value)
	d.KindName = strings.ToUpper(kind[:1]) + kind[1:] + d.GoName
	d.Fields = b.fields(kind, fields)
	d.RenamedFrom = b.oldNames(kind+" "+d.Name, d.Snake, renamed)
	return d
}

// oldNames checks the names a state, event, action or field had before
// (renamed_from) and returns them; current is the name's JSON form now,
// which an old name must differ from.
func (b *builder) oldNames(what, current string, renamed []spec.String) []string {
	var out []string
	for _, old := range renamed {
		switch {
		case !identRE.MatchString(old.Value):
			b.errorf(old.Pos, "%s: renamed_from %q is not a name", what, old.Value)
		case SnakeName(old.Value) == current:
			b.errorf(old.Pos, "%s: renamed_from %q is its name now (in JSON, %s): give the name it had before", what, old.Value, current)
		case slices.Contains(out, old.Value):
			b.errorf(old.Pos, "%s: renamed_from lists %q twice", what, old.Value)
		default:
			out = append(out, old.Value)
		}
	}
	return out
}

func (b *builder) decls() {
	f, m := b.f, b.m
	b.states, b.events, b.actions = map[string]*State{}, map[string]*Event{}, map[string]*Action{}
	b.specOf = map[*State]*spec.State{}
	b.readStates()
	for i, se := range f.Events {
		e := &Event{Decl: b.decl("event", se.Name, se.Doc, se.Fields, se.RenamedFrom, i)}
		if e.GoName != "" {
			b.events[e.Name] = e
		}
		m.Events = append(m.Events, e)
	}
	for i, sa := range f.Actions {
		a := &Action{Decl: b.decl("action", sa.Name, sa.Doc, sa.Fields, sa.RenamedFrom, i)}
		if a.GoName != "" {
			b.actions[a.Name] = a
		}
		m.Actions = append(m.Actions, a)
	}
	if hasTimers(f.States) {
		b.timerDecls()
	}
}

func (b *builder) funcs() {
	b.fnByName = map[string]*Func{}
	add := func(list []spec.Func, kind FuncKind, out *[]*Func) {
		for _, sf := range list {
			fn := &Func{Name: sf.Name.Value, Kind: kind, Doc: strings.TrimSpace(sf.Doc.Value), Pos: sf.Name.Pos}
			if !identRE.MatchString(fn.Name) {
				b.errorf(fn.Pos, "%s name %q is not an identifier", kindWord(kind), fn.Name)
				continue
			}
			fn.GoName = GoName(fn.Name)
			if prev, ok := b.fnByName[fn.Name]; ok {
				b.errorf(fn.Pos, "%q is declared as both a %s and a %s (%s)", fn.Name, kindWord(prev.Kind), kindWord(kind), prev.Pos)
				continue
			}
			fn.Reads = b.fields(kindWord(kind)+" "+fn.Name+"'s read", sf.Reads)
			b.uniqueParams(fn.Reads)
			switch {
			case kind == Guard && len(sf.Sets) > 0:
				b.errorf(sf.SetsPos, "guard %s sets nothing: a guard only decides; move what it computes to an effect", fn.Name)
			case kind == Effect && len(sf.Sets) == 0:
				b.errorf(fn.Pos, "effect %s sets nothing: list the fields it computes under \"sets\" (an effect returns them; the machine stores them in the target state and the actions)", fn.Name)
			default:
				fn.Sets = b.fields("effect "+fn.Name+"'s set", sf.Sets)
				b.uniqueParams(fn.Sets)
			}
			b.fnByName[fn.Name] = fn
			*out = append(*out, fn)
		}
	}
	add(b.f.Guards, Guard, &b.m.Guards)
	add(b.f.Effects, Effect, &b.m.Effects)
}

// uniqueParams makes the parameter names of a list distinct: two fields
// whose names differ only in spelling get a number.
func (b *builder) uniqueParams(fields []*Field) {
	seen := map[string]bool{}
	for _, f := range fields {
		p := f.Param
		for i := 2; seen[p]; i++ {
			p = fmt.Sprintf("%s%d", f.Param, i)
		}
		f.Param = p
		seen[p] = true
	}
}

func kindWord(k FuncKind) string {
	if k == Guard {
		return "guard"
	}
	return "effect"
}

func names[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (b *builder) state(s spec.String) *State {
	if st, ok := b.states[s.Value]; ok {
		return st
	}
	b.errorf(s.Pos, "unknown state %q%s", s.Value, suggest.DidYouMean(s.Value, names(b.states)))
	return nil
}

func (b *builder) event(s spec.String) *Event {
	if e, ok := b.events[s.Value]; ok {
		return e
	}
	b.errorf(s.Pos, "unknown event %q%s", s.Value, suggest.DidYouMean(s.Value, names(b.events)))
	return nil
}

func (b *builder) action(s spec.String) *Action {
	if a, ok := b.actions[s.Value]; ok {
		return a
	}
	b.errorf(s.Pos, "unknown action %q%s", s.Value, suggest.DidYouMean(s.Value, names(b.actions)))
	return nil
}

func (b *builder) fn(s spec.String, kind FuncKind) *Func {
	fn, ok := b.fnByName[s.Value]
	if !ok {
		var known []string
		for _, f := range b.fnByName {
			if f.Kind == kind {
				known = append(known, f.Name)
			}
		}
		slices.Sort(known)
		b.errorf(s.Pos, "unknown %s %q: declare it under %ss%s", kindWord(kind), s.Value, kindWord(kind), suggest.DidYouMean(s.Value, known))
		return nil
	}
	if fn.Kind != kind {
		b.errorf(s.Pos, "%q is a %s, not a %s", s.Value, kindWord(fn.Kind), kindWord(kind))
		return nil
	}
	return fn
}

// limits stops a spec whose table is too large to check or generate.
func (b *builder) limits() bool {
	ns, ne := len(b.m.States), len(b.m.Events)
	pos := b.f.Pos
	switch {
	case ns > MaxStates:
		b.errorf(pos, "the machine has %d states, more than the limit of %d: split it into machines that talk through actions and events", ns, MaxStates)
	case ne > MaxEvents:
		b.errorf(pos, "the machine has %d events, more than the limit of %d: split it into machines that talk through actions and events", ne, MaxEvents)
	case ns*ne > MaxPairs:
		b.errorf(pos, "the machine has %d states × %d events = %d pairs to resolve, more than the limit of %d: split it into machines that talk through actions and events", ns, ne, ns*ne, MaxPairs)
	default:
		return true
	}
	return false
}

// transitions resolves every transition entry into rules: for each state
// it names, or once for "*".
func (b *builder) transitions() {
	b.rows = make([][]*pending, len(b.m.States))
	b.wild = make([]*pending, len(b.m.Events))
	b.eventless = make([]*pending, len(b.m.States))
	b.shared = map[*State][]*pending{}
	for i := range b.f.Transitions {
		t := &b.f.Transitions[i]
		var ev *Event
		if t.On.Set {
			if ev = b.event(t.On); ev == nil {
				continue
			}
			if ev.Builtin {
				b.errorf(t.On.Pos, "%s is the event of the timers: give the state \"after\" instead of a transition on it", ev.Name)
				continue
			}
		}
		if len(t.Guards) > 0 && (t.To.Set || t.Effect.Set || len(t.Actions) > 0 || t.Ignore.Set || t.Reject.Set) {
			b.errorf(t.Pos, "a transition with guards keeps to, effect, action, ignore and reject inside its branches")
			continue
		}
		if len(t.From) == 1 && t.From[0].Value == "*" {
			if ev == nil {
				b.errorf(t.Pos, "a \"*\" row needs \"on\": it says what every state does with one event")
				continue
			}
			if rules := b.rowRules(t, nil, ev); rules != nil {
				if prev := b.wild[ev.Index]; prev != nil {
					b.errorf(t.Pos, "\"*\" already handles %s at %s: merge the two rows into one with guards", ev.Name, prev.pos)
					continue
				}
				b.wild[ev.Index] = &pending{rules: rules, pos: t.Pos}
			}
			continue
		}
		for _, from := range b.froms(t) {
			if from.Composite() {
				if ev == nil {
					b.errorf(t.Pos, "transition from composite state %s has no \"on\": only a transient state has eventless transitions", from.Name)
					continue
				}
				rules := b.rowRules(t, from, ev)
				if rules == nil {
					continue
				}
				if b.shared[from] == nil {
					b.shared[from] = make([]*pending, len(b.m.Events))
				}
				if prev := b.shared[from][ev.Index]; prev != nil {
					b.errorf(t.Pos, "%s is already handled at %s: two transitions for one pair can both fire; merge them into one transition with guards", pairName(from, ev), prev.pos)
					continue
				}
				b.shared[from][ev.Index] = &pending{rules: rules, pos: t.Pos}
				continue
			}
			if from.Transient != (ev == nil) {
				if ev == nil {
					b.errorf(t.Pos, "transition from %s has no \"on\": only a transient state has eventless transitions", from.Name)
				} else {
					b.errorf(t.On.Pos, "transient state %s cannot handle event %s: it is left in the step that enters it, so give it eventless transitions (no \"on\")", from.Name, ev.Name)
				}
				continue
			}
			rules := b.rowRules(t, from, ev)
			if rules == nil {
				continue
			}
			p := &pending{rules: rules, pos: t.Pos}
			if ev == nil {
				if prev := b.eventless[from.Index]; prev != nil {
					b.errorf(t.Pos, "%s is already handled at %s: two transitions for one pair can both fire; merge them into one transition with guards", pairName(from, nil), prev.pos)
					continue
				}
				b.eventless[from.Index] = p
				continue
			}
			if b.rows[from.Index] == nil {
				b.rows[from.Index] = make([]*pending, len(b.m.Events))
			}
			if prev := b.rows[from.Index][ev.Index]; prev != nil {
				b.errorf(t.Pos, "%s is already handled at %s: two transitions for one pair can both fire; merge them into one transition with guards", pairName(from, ev), prev.pos)
				continue
			}
			b.rows[from.Index][ev.Index] = p
		}
	}
}

// froms resolves the states of a transition's "from".
func (b *builder) froms(t *spec.Transition) []*State {
	var out []*State
	seen := map[*State]bool{}
	for _, n := range t.From {
		if n.Value == "*" {
			b.errorf(n.Pos, "\"*\" stands alone: it already means every state")
			continue
		}
		if s := b.state(n); s != nil {
			if seen[s] {
				b.errorf(n.Pos, "state %s is listed twice", s.Name)
				continue
			}
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// rowRules makes the rules one transition entry gives one state, or "*"
// when from is nil.
func (b *builder) rowRules(t *spec.Transition, from *State, ev *Event) []*Rule {
	if len(t.Guards) == 0 {
		r := b.outcome(&t.Outcome, t.Pos, from, ev)
		if r == nil {
			return nil
		}
		return []*Rule{r}
	}
	var out []*Rule
	seen := map[*Func]diag.Pos{}
	sawElse, ok := false, true
	for i := range t.Guards {
		br := &t.Guards[i]
		if sawElse {
			b.errorf(br.Pos, "branch after else can never fire: else must be the last branch")
			return nil
		}
		switch {
		case br.If.Set && br.Else.Set:
			b.errorf(br.Pos, "a branch has either \"if\" or \"else\", not both")
			ok = false
			continue
		case br.Else.Set:
			if !br.Else.Value {
				b.errorf(br.Else.Pos, "write \"else: true\" for the last branch, or remove it")
				ok = false
				continue
			}
			sawElse = true
		case !br.If.Set:
			b.errorf(br.Pos, "branch has no \"if\": name a guard, or write \"else: true\"")
			ok = false
			continue
		}
		r := b.outcome(&br.Outcome, br.Pos, from, ev)
		if br.If.Set {
			g := b.fn(br.If, Guard)
			if g == nil {
				ok = false
				continue
			}
			if prev, dup := seen[g]; dup {
				b.errorf(br.If.Pos, "guard %s is already tested at %s: this branch can never fire", g.Name, prev)
				ok = false
				continue
			}
			seen[g] = br.If.Pos
			if r != nil {
				r.Guard = g
			}
		} else if r != nil {
			r.Else = true
		}
		if r == nil {
			ok = false
			continue
		}
		out = append(out, r)
	}
	if !ok {
		return nil
	}
	if !sawElse {
		b.errorf(t.Pos, "guards of %s end without an else branch: add \"- else: true\" saying what happens when no guard holds", pairName(from, ev))
		return nil
	}
	return out
}

func pairName(s *State, e *Event) string {
	from := "*"
	if s != nil {
		from = s.Name
	}
	if e == nil {
		return from + " (eventless)"
	}
	return from + " × " + e.Name
}

// outcome resolves what a transition or branch does.
func (b *builder) outcome(o *spec.Outcome, pos diag.Pos, from *State, ev *Event) *Rule {
	r := b.outcomeRule(o, pos, from, ev)
	if r != nil && len(o.Examples) > 0 {
		i := slices.IndexFunc(b.pendingEx, func(pe *pendingExamples) bool { return &pe.examples[0] == &o.Examples[0] })
		if i < 0 {
			b.pendingEx = append(b.pendingEx, &pendingExamples{examples: o.Examples})
			i = len(b.pendingEx) - 1
		}
		b.pendingEx[i].rules = append(b.pendingEx[i].rules, r)
	}
	return r
}

// outcomeRule makes the rule of an outcome.
func (b *builder) outcomeRule(o *spec.Outcome, pos diag.Pos, from *State, ev *Event) *Rule {
	r := &Rule{From: from, Event: ev, Pos: pos}
	moves := o.To.Set || o.Effect.Set || len(o.Actions) > 0
	switch {
	case o.Ignore.Set && o.Reject.Set, (o.Ignore.Set || o.Reject.Set) && moves:
		b.errorf(pos, "choose one of ignore, reject, or a transition (to, effect, action)")
		return nil
	case ev == nil && from != nil && (o.Ignore.Set || o.Reject.Set):
		b.errorf(pos, "transient state %s has no event to ignore or reject: its eventless transitions must leave it", from.Name)
		return nil
	case o.Ignore.Set:
		if !o.Ignore.Value {
			b.errorf(o.Ignore.Pos, "write \"ignore: true\", or remove it")
			return nil
		}
		r.Kind = Ignore
		return r
	case o.Reject.Set:
		if strings.TrimSpace(o.Reject.Value) == "" {
			b.errorf(o.Reject.Pos, "reject needs a reason, e.g. \"reject: busy with a request\"")
			return nil
		}
		r.Kind, r.Reason = Reject, strings.TrimSpace(o.Reject.Value)
		return r
	case !moves:
		b.errorf(pos, "transition does nothing: give it to, effect or action, or ignore or reject the event")
		return nil
	}
	r.Kind = Transition
	ok := true
	if from != nil && from.Transient && !o.To.Set {
		b.errorf(pos, "an eventless transition of transient state %s must leave it: give it \"to\"", from.Name)
		return nil
	}
	if o.To.Set {
		if r.Target = b.state(o.To); r.Target == nil {
			ok = false
		} else if r.To = descend(r.Target); r.To == nil {
			ok = false // the composite's missing initial child is reported
		} else if r.To == from && from.Transient {
			b.errorf(o.To.Pos, "transient state %s cannot lead to itself: it would loop without an event", from.Name)
			ok = false
		}
	}
	if o.Local.Set && o.Local.Value {
		switch {
		case from == nil || !from.Composite():
			b.errorf(o.Local.Pos, "local applies to a transition of a composite state into its own substates: this one has no composite source")
			ok = false
		case r.Target == nil || !from.Contains(r.Target) || r.Target == from:
			b.errorf(o.Local.Pos, "a local transition of %s must lead to one of its substates (UML: its target differs from its source); to leave and re-enter %s, remove local", from.Name, from.Name)
			ok = false
		default:
			r.Local = true
		}
	}
	if r.To != nil && r.To.Transient && len(o.Actions) > 0 {
		b.errorf(o.Actions[0].Pos, "a transition into transient state %s emits no action: its eventless transitions do", r.To.Name)
		ok = false
	}
	if o.Effect.Set {
		if r.Effect = b.fn(o.Effect, Effect); r.Effect == nil {
			ok = false
		}
	}
	for _, n := range o.Actions {
		a := b.action(n)
		if a == nil {
			ok = false
			continue
		}
		r.Actions = append(r.Actions, &Emit{Action: a})
	}
	if from != nil && from.Terminal && r.To != nil && r.To != from {
		b.errorf(o.To.Pos, "terminal state %s cannot have a transition to %s: a terminal state is never left", from.Name, r.To.Name)
		ok = false
	}
	if !ok {
		return nil
	}
	return r
}

// stateLists adds the rules of each state's ignore and reject lists; a
// "*" list resolves every event the state has no rule for.
func (b *builder) stateLists() {
	b.other = map[*State]otherList{}
	for _, s := range b.all {
		ss := b.specOf[s]
		for _, list := range []struct {
			names []spec.String
			kind  RuleKind
		}{{ss.Ignore, Ignore}, {ss.Reject, Reject}} {
			for _, n := range list.names {
				if s.Transient {
					b.errorf(n.Pos, "transient state %s receives no events, so it ignores or rejects none", s.Name)
					break
				}
				if n.Value == "*" {
					if prev, ok := b.other[s]; ok {
						b.errorf(n.Pos, "state %s already resolves every other event at %s", s.Name, prev.pos)
						continue
					}
					if len(list.names) > 1 {
						b.errorf(n.Pos, "\"*\" stands alone in a %s list: it already means every other event", list.kind)
						continue
					}
					b.other[s] = otherList{kind: list.kind, pos: n.Pos}
					continue
				}
				e := b.event(n)
				if e == nil {
					continue
				}
				if e.Builtin {
					b.errorf(n.Pos, "%s is the event of the timers: a state without a running timer already ignores it", e.Name)
					continue
				}
				r := &Rule{Kind: list.kind, From: s, Event: e, Pos: n.Pos, Listed: true}
				if list.kind == Reject {
					r.Reason = refusal(s, e)
				}
				rows := b.rowsOf(s)
				if prev := rows[e.Index]; prev != nil {
					b.errorf(n.Pos, "%s is listed under %s but already handled at %s: remove it from one of them", pairName(s, e), list.kind, prev.pos)
					continue
				}
				rows[e.Index] = &pending{rules: []*Rule{r}, pos: n.Pos}
			}
		}
	}
}

// refusal is the reason a state's reject list gives: "X is not accepted
// in state S", or for a composite state "X is not accepted while in S".
func refusal(s *State, e *Event) string {
	if s.Composite() {
		return fmt.Sprintf("%s is not accepted while in %s", e.Name, s.Name)
	}
	return fmt.Sprintf("%s is not accepted in state %s", e.Name, s.Name)
}

// rowsOf returns the rows of a state, by event, allocating them.
func (b *builder) rowsOf(s *State) []*pending {
	if s.Composite() {
		if b.shared[s] == nil {
			b.shared[s] = make([]*pending, len(b.m.Events))
		}
		return b.shared[s]
	}
	if b.rows[s.Index] == nil {
		b.rows[s.Index] = make([]*pending, len(b.m.Events))
	}
	return b.rows[s.Index]
}

// goNames reports spec names that turn into the same Go identifier, or
// into one fsmgen generates.
func (b *builder) goNames() {
	type owner struct {
		what string
		pos  diag.Pos
	}
	taken := map[string]owner{}
	for _, r := range Generated {
		taken[r] = owner{what: "a name fsmgen generates"}
	}
	claim := func(id, what string, pos diag.Pos) bool {
		if prev, ok := taken[id]; ok {
			if prev.pos.Line == 0 {
				b.errorf(pos, "%s is %s in Go, %s: rename it", what, id, prev.what)
			} else {
				b.errorf(pos, "%s is %s in Go, like %s (%s): rename one of them", what, id, prev.what, prev.pos)
				b.errorf(prev.pos, "%s is %s in Go, like %s (%s): rename one of them", prev.what, id, what, pos)
			}
			return false
		}
		taken[id] = owner{what: what, pos: pos}
		return true
	}
	if b.m.TimerFired != nil {
		for _, d := range []*Decl{&b.m.TimerFired.Decl, &b.m.StartTimer.Decl, &b.m.CancelTimer.Decl} {
			taken[d.GoName] = owner{what: "the " + d.Name + " fsmgen declares for the timers"}
			taken[d.KindName] = owner{what: "the kind constant of " + d.Name + ", which fsmgen declares for the timers"}
		}
	}
	for _, ds := range b.kindSets() {
		for _, d := range ds.decls {
			if d.Builtin {
				continue
			}
			if d.GoName != "" && claim(d.GoName, ds.what+" "+d.Name, d.Pos) && d.KindName != "" {
				claim(d.KindName, ds.what+" "+d.Name+"'s kind constant", d.Pos)
			}
		}
	}
	for _, a := range b.m.Actions {
		if a.GoName == "Actions" {
			b.errorf(a.Pos, "action %s is %s in Go, the name of the Recorder's list of actions: rename it", a.Name, a.GoName)
		}
	}
	// A package the spec imports under the Go name of a state, event or
	// action (an alias in capitals) is imported under another name.
	for i, imp := range b.m.Imports {
		if _, clash := taken[imp.GoName]; clash {
			names := aliasesBut(b.m.Imports, i)
			for id := range taken {
				names[id] = true
			}
			b.m.Imports[i].GoName = importName(imp.Alias, names)
		}
	}
	methods := map[string]owner{}
	for _, fns := range [][]*Func{b.m.Guards, b.m.Effects} {
		for _, fn := range fns {
			what := kindWord(fn.Kind) + " " + fn.Name
			if prev, ok := methods[fn.GoName]; ok {
				b.errorf(fn.Pos, "%s is %s in Go, like %s (%s): rename one of them", what, fn.GoName, prev.what, prev.pos)
				continue
			}
			methods[fn.GoName] = owner{what: what, pos: fn.Pos}
		}
	}
}

// kindSet is the declarations of one kind, for checks that treat states,
// events and actions alike.
type kindSet struct {
	what  string
	decls []*Decl
}

func (b *builder) kindSets() []kindSet {
	var ss, es, as []*Decl
	for _, s := range b.all {
		ss = append(ss, &s.Decl)
	}
	for _, e := range b.m.Events {
		es = append(es, &e.Decl)
	}
	for _, a := range b.m.Actions {
		as = append(as, &a.Decl)
	}
	return []kindSet{{"state", ss}, {"event", es}, {"action", as}}
}

// data lays out the machine's storage: one entry per field name and type
// of the states, shared by the states that have it.
func (b *builder) data() {
	type key struct{ name, typ string }
	byKey := map[key]*Data{}
	used := map[string]bool{}
	for _, s := range b.all {
		for _, f := range s.Fields {
			k := key{f.Name, f.Type}
			d := byKey[k]
			if d == nil {
				base := LowerName(f.Name)
				goName := base
				for i := 2; used[goName] || token.IsKeyword(goName); i++ {
					goName = fmt.Sprintf("%s%d", base, i)
				}
				used[goName] = true
				d = &Data{Name: f.Name, Type: f.Type, GoType: f.GoType, GoName: goName, Zero: b.zero(f.Type)}
				byKey[k] = d
				b.m.Data = append(b.m.Data, d)
			}
			if !s.Composite() {
				d.States = append(d.States, s)
			}
			f.Data = d
		}
	}
}

// applies reports whether the shared row p gives state s its rules for
// the event: never to a transient state, and never to a terminal state
// that one of its rules would lead out.
func applies(s *State, p *pending) bool {
	if s.Transient {
		return false
	}
	if s.Terminal {
		for _, r := range p.rules {
			if r.Kind == Transition && r.To != nil && r.To != s {
				return false
			}
		}
	}
	return true
}

// cells orders the rules into cells, numbers them, and reports the pairs
// nothing resolves. A state handles an event with a rule of its own, or
// else leaves it to the innermost ancestor with a rule for it, or else to
// a "*" row.
func (b *builder) cells() {
	m := b.m
	b.sharedCells, b.users, b.cellOf = map[sharedKey]*Cell{}, map[*Cell][]*State{}, map[*Rule]*Cell{}
	for _, s := range m.States {
		if s.Transient {
			p := b.eventless[s.Index]
			if p == nil {
				b.errorf(s.Pos, "transient state %s has no eventless transitions: add transitions from it without \"on\"", s.Name)
				continue
			}
			s.Choice = &Cell{State: s, Rules: p.rules}
			b.number(s.Choice)
			continue
		}
		var missing []string
		for _, e := range m.Events {
			if e.Builtin {
				continue
			}
			var p *pending
			if b.rows[s.Index] != nil {
				p = b.rows[s.Index][e.Index]
			}
			if p == nil {
				p = b.others(s, e)
			}
			if p == nil {
				if c := b.inherited(s, e); c != nil {
					s.Inherited = append(s.Inherited, c)
					b.users[c] = append(b.users[c], s)
				} else {
					missing = append(missing, e.Name)
				}
				continue
			}
			c := &Cell{State: s, Event: e, Rules: p.rules}
			if len(p.rules) == 1 && p.rules[0].Kind != Transition {
				s.Refuses = append(s.Refuses, c)
			} else {
				s.Handles = append(s.Handles, c)
			}
			b.number(c)
		}
		b.reportMissing(s, missing)
	}
	comps := slices.Clone(m.Composites)
	slices.SortStableFunc(comps, func(a, c *State) int { return c.Depth - a.Depth })
	for _, owner := range append(comps, nil) {
		for _, e := range m.Events {
			if c := b.sharedCells[sharedKey{owner, e}]; c != nil {
				m.Shared = append(m.Shared, c)
				b.number(c)
			}
		}
	}
	for _, t := range m.Timers {
		b.number(t.Cell)
		if t.State.Composite() {
			for _, s := range m.States {
				if t.State.Contains(s) {
					b.users[t.Cell] = append(b.users[t.Cell], s)
				}
			}
		}
	}
	if m.TimerFired != nil {
		m.Stale = &Rule{Kind: Ignore, Event: m.TimerFired, Pos: m.Timers[0].Pos, Reason: "the timer is not running"}
		b.number(&Cell{Event: m.TimerFired, Rules: []*Rule{m.Stale}})
	}
	for _, p := range b.wild {
		if p != nil && b.cellOf[p.rules[0]] == nil {
			e := p.rules[0].Event
			b.diags.Warnf(p.pos, "the \"*\" row for %s applies to no state: every state handles %s itself; remove the row", e.Name, e.Name)
		}
	}
	for owner, rows := range b.shared {
		for _, p := range rows {
			if p != nil && b.cellOf[p.rules[0]] == nil {
				b.diags.Warnf(p.pos, "the rule of %s for %s applies to no state: every state in %s handles %s itself; remove the rule", owner.Name, p.rules[0].Event.Name, owner.Name, p.rules[0].Event.Name)
			}
		}
	}
}

// inherited returns the shared cell that gives leaf s its rules for e:
// the innermost ancestor's that has a row (or an "ignore: *" or
// "reject: *"), else the "*" row's; nil when none applies.
func (b *builder) inherited(s *State, e *Event) *Cell {
	for a := s.Parent; ; a = a.Parent {
		var p *pending
		if a == nil {
			p = b.wild[e.Index]
		} else if rows := b.shared[a]; rows != nil && rows[e.Index] != nil {
			p = rows[e.Index]
		} else if k := (sharedKey{a, e}); b.sharedCells[k] != nil {
			p = &pending{rules: b.sharedCells[k].Rules}
		} else {
			p = b.others(a, e)
		}
		if p != nil {
			if !applies(s, p) {
				return nil
			}
			k := sharedKey{a, e}
			c := b.sharedCells[k]
			if c == nil {
				c = &Cell{Owner: a, Event: e, Rules: p.rules}
				b.sharedCells[k] = c
			}
			return c
		}
		if a == nil {
			return nil
		}
	}
}

// reportMissing reports the events a state resolves in no way: one error
// per event, or one for them all when there are many.
func (b *builder) reportMissing(s *State, missing []string) {
	const each = 3
	if len(missing) <= each {
		for _, name := range missing {
			b.errorf(s.Pos, "state %s does not handle event %s: add a transition, or list %s under the state's ignore or reject", s.Name, name, name)
		}
		return
	}
	shown := missing[:each]
	b.errorf(s.Pos, "state %s does not handle %d events: %s and %d more: add transitions, or list them under the state's ignore or reject", s.Name, len(missing), strings.Join(shown, ", "), len(missing)-each)
}

func (b *builder) number(c *Cell) {
	for _, r := range c.Rules {
		b.cellOf[r] = c
		b.m.Ignores = b.m.Ignores || r.Kind == Ignore
		b.m.Rejects = b.m.Rejects || r.Kind == Reject
		r.Index = len(b.m.Rules)
		r.Label = RuleLabel(r)
		b.m.Rules = append(b.m.Rules, r)
	}
}

// sources returns the states whose data rule r reads: its own, or every
// state that leaves its event to a shared rule.
func (b *builder) sources(r *Rule) []*State {
	if !r.Shared() {
		return []*State{r.From}
	}
	return b.users[b.cellOf[r]]
}

// resolve works out what every rule passes, stores, clears and emits, and
// reports the fields that nothing fills.
func (b *builder) resolve() {
	for _, r := range b.m.Rules {
		if r.Guard != nil {
			r.Guard.Uses = append(r.Guard.Uses, r)
		}
		if r.Effect != nil {
			r.Effect.Uses = append(r.Effect.Uses, r)
		}
		if r.Kind != Transition && r.Guard == nil {
			continue
		}
		b.routes(r)
		if r.Timer != nil && r.Kind == Transition && !slices.ContainsFunc(r.Exits, func(run *Run) bool { return run.State == r.Timer.State }) {
			r.Spends = r.Timer
		}
		fl := &flow{b: b, r: r, from: b.sources(r)}
		fl.run()
	}
	for _, s := range b.m.States {
		for _, c := range append(append([]*Cell(nil), s.Handles...), s.Choice) {
			b.markReads(c)
		}
	}
	for _, c := range b.m.Shared {
		b.markReads(c)
	}
	for _, t := range b.m.Timers {
		b.markReads(t.Cell)
	}
}

// markReads sets c.ReadsEvent, and the machine's ReadsEvents, when a rule
// of c reads its event.
func (b *builder) markReads(c *Cell) {
	if c == nil || c.Event == nil {
		return
	}
	for _, r := range c.Rules {
		vals := append(append([]Value(nil), r.GuardArgs...), r.EffectArgs...)
		for _, st := range r.Stores {
			vals = append(vals, st.Value)
		}
		for _, e := range r.Actions {
			vals = append(vals, e.Args...)
		}
		for _, v := range vals {
			if v.Source == FromEvent {
				c.ReadsEvent, b.m.ReadsEvents = true, true
				return
			}
		}
	}
}
