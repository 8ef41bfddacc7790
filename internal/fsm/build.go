package fsm

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/spec"
	"github.com/fsmgen/fsmgen/internal/suggest"
)

// Build checks a parsed spec and resolves it into a Machine. It returns
// every problem found, sorted; the Machine is nil when there are errors.
func Build(f *spec.File) (*Machine, diag.List) {
	b := &builder{f: f, m: &Machine{SpecFile: filepath.Base(f.Path)}}
	b.header()
	b.decls()
	b.funcs()
	b.transitions()
	b.stateLists()
	b.goNames()
	// Totality, reachability and unused declarations are only worth
	// reporting once every name resolves; before that they are noise.
	if !b.diags.HasErrors() {
		b.cells()
		b.signatures()
		b.graph()
		b.unused()
	}
	b.diags.Sort()
	if b.diags.HasErrors() {
		return nil, b.diags
	}
	return b.m, b.diags
}

type builder struct {
	f     *spec.File
	m     *Machine
	diags diag.List

	states   map[string]*State
	events   map[string]*Event
	actions  map[string]*Action
	fnByName map[string]*Func
	// localTypes are the unqualified names field types use, with where.
	localTypes []localType
	imports    map[string]*importUse
	// rows[state][event] collects the rows given for a pair before the
	// cells are made; wild marks rows that came from "*".
	rows map[*State]map[*Event]*pending
}

// localType is an unqualified name used as a type: a predeclared type, a
// type fsmgen generates, or one written by hand in the output package.
type localType struct {
	name string
	typ  spec.String
}

type importUse struct {
	spec.Import
	used bool
}

// pending is the rows one transition entry gives one (state, event) pair.
type pending struct {
	rules []*Rule
	wild  bool
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
		} else if !regexpPackage(m.Package) {
			b.errorf(f.Package.Pos, "package name %q is not a lower-case Go identifier", m.Package)
		}
	}
	if f.Behavior.Set {
		if t := f.Behavior.Value; token.IsIdentifier(t) && t != "_" {
			m.Behavior = t
		} else {
			b.errorf(f.Behavior.Pos, "behavior %q is not a Go identifier: name a type of the output package, e.g. behavior: Agent", t)
		}
	}
	m.Doc = strings.TrimSpace(f.Doc.Value)
	b.imports = map[string]*importUse{}
	for _, imp := range f.Imports {
		alias, p := imp.Alias.Value, imp.Path.Value
		switch {
		case token.IsKeyword(alias):
			b.errorf(imp.Alias.Pos, "import alias %q is a Go keyword", alias)
		case !token.IsIdentifier(alias) || alias == "_":
			b.errorf(imp.Alias.Pos, "import alias %q is not a Go identifier", alias)
		case !validImportPath(p):
			b.errorf(imp.Path.Pos, "import path %q is not a valid Go import path", p)
		default:
			b.imports[alias] = &importUse{Import: imp}
			m.Imports = append(m.Imports, Import{Alias: alias, Path: p})
		}
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

func regexpPackage(s string) bool {
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

func (b *builder) decl(kind string, name, doc spec.String, fields []spec.Field, index int) Decl {
	d := Decl{Name: name.Value, Pos: name.Pos, Index: index, Doc: strings.TrimSpace(doc.Value)}
	if !identRE.MatchString(name.Value) {
		b.errorf(name.Pos, "%s name %q is not an identifier: use letters, digits and underscores, starting with a letter", kind, name.Value)
		return d
	}
	d.GoName = GoName(name.Value)
	d.Snake = SnakeName(name.Value)
	d.KindName = strings.ToUpper(kind[:1]) + kind[1:] + d.GoName
	byGo := map[string]*Field{}
	for _, sf := range fields {
		fd := &Field{Name: sf.Name.Value, Pos: sf.Name.Pos, Type: sf.Type.Value, Doc: strings.TrimSpace(sf.Doc.Value)}
		if !identRE.MatchString(fd.Name) {
			b.errorf(fd.Pos, "field name %q is not an identifier", fd.Name)
			continue
		}
		fd.GoName, fd.JSONName = GoName(fd.Name), SnakeName(fd.Name)
		if fd.JSONName == "kind" {
			b.errorf(fd.Pos, "field name %q is reserved: \"kind\" tells the %ss apart in JSON", fd.Name, kind)
			continue
		}
		if prev, ok := byGo[fd.GoName]; ok {
			b.errorf(fd.Pos, "field %q and field %q (%s) are both %s in Go: rename one", fd.Name, prev.Name, prev.Pos, fd.GoName)
			continue
		}
		byGo[fd.GoName] = fd
		if b.checkType(sf.Type) {
			fd.Type = normaliseType(fd.Type)
		}
		d.Fields = append(d.Fields, fd)
	}
	return d
}

// checkType parses a field's type and checks its package qualifiers.
func (b *builder) checkType(t spec.String) bool {
	if !t.Set || strings.TrimSpace(t.Value) == "" {
		b.errorf(t.Pos, "field has no type")
		return false
	}
	expr, err := parser.ParseExpr(t.Value)
	if err != nil {
		b.errorf(t.Pos, "type %q is not a Go type expression", t.Value)
		return false
	}
	ok, reported := true, false
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.Ident:
			ok = ok && e.Name != "_"
			if obj := types.Universe.Lookup(e.Name); obj != nil {
				if _, isType := obj.(*types.TypeName); !isType {
					b.errorf(t.Pos, "type %q uses %s, which is not a type", t.Value, e.Name)
					ok, reported = false, true
				}
			} else {
				b.localTypes = append(b.localTypes, localType{name: e.Name, typ: t})
			}
		case *ast.SelectorExpr:
			id, isID := e.X.(*ast.Ident)
			if !isID {
				ok = false
				return
			}
			imp, known := b.imports[id.Name]
			if !known {
				b.errorf(t.Pos, "type %q uses package %q, which is not under imports%s", t.Value, id.Name, suggest.DidYouMean(id.Name, names(b.imports)))
				ok, reported = false, true
				return
			}
			imp.used = true
		case *ast.StarExpr:
			walk(e.X)
		case *ast.ArrayType:
			if e.Len != nil {
				if _, lit := e.Len.(*ast.BasicLit); !lit {
					ok = false
				}
			}
			walk(e.Elt)
		case *ast.MapType:
			walk(e.Key)
			walk(e.Value)
		default:
			ok = false
		}
	}
	walk(expr)
	if !ok && !reported {
		b.errorf(t.Pos, "type %q is not supported: use a name, a qualified name (pkg.Name), a pointer, a slice, an array or a map of those", t.Value)
	}
	return ok
}

// normaliseType prints a type expression in gofmt style, so that types
// compare equal however they were spaced.
func normaliseType(s string) string {
	return strings.Join(strings.Fields(s), "")
}

func (b *builder) decls() {
	f, m := b.f, b.m
	b.states, b.events, b.actions = map[string]*State{}, map[string]*Event{}, map[string]*Action{}
	for i, ss := range f.States {
		s := &State{Decl: b.decl("state", ss.Name, ss.Doc, ss.Fields, i)}
		s.Initial, s.Terminal, s.Transient = ss.Initial.Value, ss.Terminal.Value, ss.Transient.Value
		if s.Transient && (s.Initial || s.Terminal) {
			b.errorf(ss.Transient.Pos, "state %s cannot be transient and %s: a transient state is left in the step that enters it", s.Name, map[bool]string{true: "initial", false: "terminal"}[s.Initial])
		}
		if s.Initial {
			if m.Initial != nil {
				b.errorf(ss.Initial.Pos, "state %s is marked initial, but %s (%s) already is: a machine has one initial state", s.Name, m.Initial.Name, m.Initial.Pos)
			} else {
				m.Initial = s
			}
		}
		if s.GoName != "" {
			b.states[s.Name] = s
		}
		m.States = append(m.States, s)
	}
	if m.Initial == nil && len(f.States) > 0 {
		b.errorf(f.States[0].Name.Pos, "no state is marked \"initial: true\": mark the state the machine starts in")
	}
	for i, se := range f.Events {
		e := &Event{Decl: b.decl("event", se.Name, se.Doc, se.Fields, i)}
		if e.GoName != "" {
			b.events[e.Name] = e
		}
		m.Events = append(m.Events, e)
	}
	for i, sa := range f.Actions {
		a := &Action{Decl: b.decl("action", sa.Name, sa.Doc, sa.Fields, i)}
		if a.GoName != "" {
			b.actions[a.Name] = a
		}
		m.Actions = append(m.Actions, a)
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
			b.fnByName[fn.Name] = fn
			*out = append(*out, fn)
		}
	}
	add(b.f.Guards, Guard, &b.m.Guards)
	add(b.f.Effects, Effect, &b.m.Effects)
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

// transitions expands every transition entry into rows per (state, event).
func (b *builder) transitions() {
	b.rows = map[*State]map[*Event]*pending{}
	for i := range b.f.Transitions {
		t := &b.f.Transitions[i]
		var ev *Event
		if t.On.Set {
			ev = b.event(t.On)
		}
		froms, wild := b.froms(t)
		if len(t.Guards) > 0 && (t.To.Set || t.Effect.Set || t.Action.Set || t.Ignore.Set || t.Reject.Set) {
			b.errorf(t.Pos, "a transition with guards keeps to, effect, action, ignore and reject inside its branches")
			continue
		}
		if t.On.Set && ev == nil {
			continue
		}
		for _, from := range froms {
			if from.Transient != (ev == nil) {
				if ev == nil {
					b.errorf(t.Pos, "transition from %s has no \"on\": only a transient state has eventless transitions", from.Name)
				} else {
					b.errorf(t.On.Pos, "transient state %s cannot handle event %s: it is left in the step that enters it, so give it eventless transitions (no \"on\")", from.Name, ev.Name)
				}
				continue
			}
			rules := b.rowRules(t, from, ev, wild)
			if rules == nil {
				continue
			}
			if wild && from.Terminal && rules[0].Kind == Transition && rules[0].To != from && len(rules) == 1 {
				continue // "*" never gives a terminal state a way out
			}
			b.addRows(from, ev, &pending{rules: rules, wild: wild, pos: t.Pos})
		}
	}
}

// froms resolves a transition's "from": states, or "*" for every
// non-transient state.
func (b *builder) froms(t *spec.Transition) ([]*State, bool) {
	if len(t.From) == 1 && t.From[0].Value == "*" {
		var out []*State
		for _, s := range b.m.States {
			if !s.Transient {
				out = append(out, s)
			}
		}
		return out, true
	}
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
	return out, false
}

// rowRules makes the rows one transition entry gives one state.
func (b *builder) rowRules(t *spec.Transition, from *State, ev *Event, wild bool) []*Rule {
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
	if e == nil {
		return s.Name + " (eventless)"
	}
	return s.Name + " × " + e.Name
}

// outcome resolves what a transition or branch does.
func (b *builder) outcome(o *spec.Outcome, pos diag.Pos, from *State, ev *Event) *Rule {
	r := &Rule{From: from, Event: ev, Pos: pos, To: from}
	moves := o.To.Set || o.Effect.Set || o.Action.Set
	switch {
	case o.Ignore.Set && o.Reject.Set, (o.Ignore.Set || o.Reject.Set) && moves:
		b.errorf(pos, "choose one of ignore, reject, or a transition (to, effect, action)")
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
	if o.To.Set {
		if r.To = b.state(o.To); r.To == nil {
			ok = false
		} else if r.To.Transient && o.Action.Set {
			b.errorf(o.Action.Pos, "a transition into transient state %s emits no action: its eventless transitions do", r.To.Name)
			ok = false
		}
	}
	if o.Effect.Set {
		if r.Effect = b.fn(o.Effect, Effect); r.Effect == nil {
			ok = false
		}
	}
	if o.Action.Set {
		if r.Action = b.action(o.Action); r.Action == nil {
			ok = false
		}
	}
	if from.Terminal && r.To != from && r.To != nil {
		b.errorf(o.To.Pos, "terminal state %s cannot have a transition to %s: a terminal state is never left", from.Name, r.To.Name)
		ok = false
	}
	if !ok {
		return nil
	}
	return r
}

// addRows records the rows for a pair. Explicit rows override rows from
// "*"; two explicit (or two "*") entries for one pair are an error.
func (b *builder) addRows(s *State, e *Event, p *pending) {
	if b.rows[s] == nil {
		b.rows[s] = map[*Event]*pending{}
	}
	prev, ok := b.rows[s][e]
	switch {
	case !ok:
		b.rows[s][e] = p
	case prev.wild && !p.wild:
		b.rows[s][e] = p
	case !prev.wild && p.wild:
	default:
		b.errorf(p.pos, "%s is already handled at %s: two transitions for one pair can both fire; merge them into one transition with guards", pairName(s, e), prev.pos)
	}
}

// stateLists adds the rows of each state's ignore and reject lists.
func (b *builder) stateLists() {
	for i, ss := range b.f.States {
		s := b.m.States[i]
		for _, list := range []struct {
			names []spec.String
			kind  RuleKind
		}{{ss.Ignore, Ignore}, {ss.Reject, Reject}} {
			for _, n := range list.names {
				if s.Transient {
					b.errorf(n.Pos, "transient state %s receives no events, so it ignores or rejects none", s.Name)
					break
				}
				e := b.event(n)
				if e == nil {
					continue
				}
				r := &Rule{Kind: list.kind, From: s, To: s, Event: e, Pos: n.Pos, Listed: true}
				if list.kind == Reject {
					r.Reason = fmt.Sprintf("%s is not accepted in state %s", e.Name, s.Name)
				}
				if prev, ok := b.rows[s][e]; ok && !prev.wild {
					b.errorf(n.Pos, "%s is listed under %s but handled at %s: remove it from the list", pairName(s, e), list.kind, prev.pos)
					continue
				}
				if b.rows[s] == nil {
					b.rows[s] = map[*Event]*pending{}
				}
				b.rows[s][e] = &pending{rules: []*Rule{r}, pos: n.Pos}
			}
		}
	}
}

// cells orders the rows into one cell per (state, event), numbers them,
// reports the pairs nothing handles, and computes carry-overs.
func (b *builder) cells() {
	m := b.m
	for _, s := range m.States {
		if s.Transient {
			p := b.rows[s][nil]
			if p == nil {
				b.errorf(s.Pos, "transient state %s has no eventless transitions: add transitions from it without \"on\"", s.Name)
				continue
			}
			s.Choice = &Cell{State: s, Rules: p.rules}
			b.number(p.rules)
			continue
		}
		var missing []string
		for _, e := range m.Events {
			p := b.rows[s][e]
			if p == nil {
				missing = append(missing, e.Name)
				continue
			}
			s.Cells = append(s.Cells, &Cell{State: s, Event: e, Rules: p.rules})
			b.number(p.rules)
		}
		for _, name := range missing {
			b.errorf(s.Pos, "state %s does not handle event %s: add a transition, or list %s under the state's ignore or reject", s.Name, name, name)
		}
	}
	// Renumber in spec order: state by state, event by event.
	for i, r := range m.Rules {
		r.Index = i
		b.carry(r)
	}
}

func (b *builder) number(rules []*Rule) { b.m.Rules = append(b.m.Rules, rules...) }

// carry computes what a row can fill by carrying fields over, and reports
// target fields that stay unfilled on a row without an effect.
func (b *builder) carry(r *Rule) {
	if r.Kind != Transition {
		return
	}
	var evFields []*Field
	if r.Event != nil {
		evFields = r.Event.Fields
	}
	// The source state's field wins: the state carries the context, the
	// event fills in what the state does not have.
	fill := func(target *Field) (Assign, bool) {
		for _, f := range r.From.Fields {
			if f.Name == target.Name && f.Type == target.Type {
				return Assign{Field: target, Source: FromState, Src: f}, true
			}
		}
		for _, f := range evFields {
			if f.Name == target.Name && f.Type == target.Type {
				return Assign{Field: target, Source: FromEvent, Src: f}, true
			}
		}
		return Assign{}, false
	}
	check := func(what, name string, fields []*Field, out *[]Assign) {
		for _, f := range fields {
			a, ok := fill(f)
			if ok {
				*out = append(*out, a)
				continue
			}
			if r.Effect == nil {
				src := "state " + r.From.Name
				if r.Event != nil {
					src += " or event " + r.Event.Name
				}
				b.errorf(r.Pos, "field %s of %s %s cannot be filled: no field %s %s of %s has it; name an effect that sets it", f.Name, what, name, f.Name, f.Type, src)
			}
		}
	}
	if !r.Stays() {
		check("state", r.To.Name, r.To.Fields, &r.ToInit)
	}
	if r.Action != nil {
		check("action", r.Action.Name, r.Action.Fields, &r.ActInit)
	}
}

// signatures derives each guard's and effect's parameters from its rows and
// checks that every row agrees.
func (b *builder) signatures() {
	for _, r := range b.m.Rules {
		if r.Guard != nil {
			b.use(r.Guard, r)
		}
		if r.Effect != nil {
			b.use(r.Effect, r)
		}
	}
}

func (b *builder) use(fn *Func, r *Rule) {
	var sig Signature
	if p := b.rows[r.From][r.Event]; p != nil && !p.wild && len(r.From.Fields) > 0 {
		sig.From = r.From
	}
	if r.Event != nil && len(r.Event.Fields) > 0 {
		sig.Event = r.Event
	}
	if fn.Kind == Effect {
		sig.Stays = r.Stays()
		if !r.Stays() && len(r.To.Fields) > 0 {
			sig.To = r.To
		}
		if sig.Stays && len(r.From.Fields) > 0 {
			sig.From = r.From // a row that stays updates its state in place, even from "*"
		}
		if r.Action != nil && len(r.Action.Fields) > 0 {
			sig.Act = r.Action
		}
	}
	if len(fn.Uses) > 0 && fn.Sig != sig {
		first := fn.Uses[0]
		b.errorf(r.Pos, "%s %s needs other parameters here than at %s (%s): use a separate %s", kindWord(fn.Kind), fn.Name, first.Pos, describe(fn.Sig), kindWord(fn.Kind))
		return
	}
	fn.Sig = sig
	fn.Uses = append(fn.Uses, r)
}

func describe(s Signature) string {
	var parts []string
	if s.From != nil {
		parts = append(parts, "state "+s.From.Name)
	}
	if s.Event != nil {
		parts = append(parts, "event "+s.Event.Name)
	}
	if s.To != nil {
		parts = append(parts, "target "+s.To.Name)
	}
	if s.Act != nil {
		parts = append(parts, "action "+s.Act.Name)
	}
	if len(parts) == 0 {
		return "no parameters"
	}
	return strings.Join(parts, ", ")
}

// graph checks reachability, ways out, and loops among transient states.
func (b *builder) graph() {
	m := b.m
	if m.Initial == nil {
		return
	}
	succ := map[*State][]*State{}
	for _, r := range m.Rules {
		if r.Kind == Transition && !r.Stays() {
			succ[r.From] = append(succ[r.From], r.To)
		}
	}
	reached := map[*State]bool{m.Initial: true}
	queue := []*State{m.Initial}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, t := range succ[s] {
			if !reached[t] {
				reached[t] = true
				queue = append(queue, t)
			}
		}
	}
	for _, s := range m.States {
		if !reached[s] {
			b.errorf(s.Pos, "state %s is unreachable from the initial state %s", s.Name, m.Initial.Name)
		}
		if !s.Terminal && len(succ[s]) == 0 {
			b.errorf(s.Pos, "state %s has no way out: add a transition to another state, or mark it \"terminal: true\"", s.Name)
		}
	}
	// A transient state whose eventless rows can lead back to itself
	// through transient states would loop within one step.
	var visit func(s *State, path []*State) bool
	visit = func(s *State, path []*State) bool {
		for i, p := range path {
			if p == s {
				names := make([]string, 0, len(path)-i+1)
				for _, q := range path[i:] {
					names = append(names, q.Name)
				}
				b.errorf(s.Pos, "transient states could loop without an event: %s → %s", strings.Join(names, " → "), s.Name)
				return true
			}
		}
		if s.Choice == nil {
			return false
		}
		for _, r := range s.Choice.Rules {
			if r.Kind == Transition && r.To.Transient && visit(r.To, append(path, s)) {
				return true
			}
		}
		return false
	}
	for _, s := range m.States {
		if s.Transient && visit(s, nil) {
			break
		}
	}
}

// unused warns about declarations no row uses, and imports no field uses.
func (b *builder) unused() {
	usedEv, usedAct := map[*Event]bool{}, map[*Action]bool{}
	for _, r := range b.m.Rules {
		if r.Kind == Transition {
			usedEv[r.Event] = true
			if r.Action != nil {
				usedAct[r.Action] = true
			}
		}
	}
	for _, e := range b.m.Events {
		if !usedEv[e] {
			b.diags.Warnf(e.Pos, "event %s never causes a transition: every state ignores or rejects it", e.Name)
		}
	}
	for _, a := range b.m.Actions {
		if !usedAct[a] {
			b.diags.Warnf(a.Pos, "action %s is never emitted", a.Name)
		}
	}
	for _, fns := range [][]*Func{b.m.Guards, b.m.Effects} {
		for _, fn := range fns {
			if len(fn.Uses) == 0 {
				b.diags.Warnf(fn.Pos, "%s %s is never used", kindWord(fn.Kind), fn.Name)
			}
		}
	}
	for _, imp := range b.f.Imports {
		if u := b.imports[imp.Alias.Value]; u != nil && !u.used {
			b.diags.Warnf(imp.Alias.Pos, "import %s is not used by any field type", imp.Alias.Value)
		}
	}
	m := b.m
	m.Imports = slices.DeleteFunc(m.Imports, func(i Import) bool { return !b.imports[i.Alias].used })
}

// reserved are the identifiers every generated package declares.
var reserved = []string{
	"Machine", "New", "Restore", "State", "Event", "Action", "StateKind", "EventKind",
	"ActionKind", "Behavior", "Observer", "Step", "Rule", "RuleKind", "Rules",
	"RuleTransition", "RuleIgnore", "RuleReject", "ErrRejected", "RejectedError",
	"MarshalState", "UnmarshalState", "MarshalEvent", "UnmarshalEvent", "MarshalAction",
	"UnmarshalAction", "StateKinds", "EventKinds", "ActionKinds",
}

// goNames reports spec names that turn into the same Go identifier.
func (b *builder) goNames() {
	type owner struct {
		what string
		pos  diag.Pos
	}
	taken := map[string]owner{}
	for _, r := range reserved {
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
	decls := func(kind string, ds []*Decl) {
		for _, d := range ds {
			if d.GoName != "" && claim(d.GoName, kind+" "+d.Name, d.Pos) {
				claim(d.KindName, kind+" "+d.Name+"'s kind constant", d.Pos)
			}
		}
	}
	var ss, es, as []*Decl
	for _, s := range b.m.States {
		ss = append(ss, &s.Decl)
	}
	for _, e := range b.m.Events {
		es = append(es, &e.Decl)
	}
	for _, a := range b.m.Actions {
		as = append(as, &a.Decl)
	}
	decls("state", ss)
	decls("event", es)
	decls("action", as)
	if t := b.m.Behavior; t != "" {
		pos := b.f.Behavior.Pos
		if claim(t, "behavior type "+t, pos) && len(b.m.Guards)+len(b.m.Effects) == 0 {
			b.errorf(pos, "behavior %s has nothing to do: the machine has no guards or effects; remove the behavior key", t)
		}
	}
	// A field type may name a type written by hand in the output package,
	// or one fsmgen generates, but not a function, variable or constant.
	values := map[string]bool{"New": true, "Restore": true, "Rules": true, "ErrRejected": true,
		"UnmarshalState": true, "UnmarshalEvent": true, "UnmarshalAction": true,
		"RuleTransition": true, "RuleIgnore": true, "RuleReject": true}
	for _, ds := range [][]*Decl{ss, es, as} {
		for _, d := range ds {
			values[d.KindName] = true
		}
	}
	for _, lt := range b.localTypes {
		if values[lt.name] {
			b.errorf(lt.typ.Pos, "type %q uses %s, which fsmgen generates as a function, variable or constant, not a type", lt.typ.Value, lt.name)
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
