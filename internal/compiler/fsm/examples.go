package fsm

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/suggest"
)

// Example is a concrete case the spec says takes a rule. The generated
// example tests run it through the real, hand-written Behavior: restore
// the state, send the event, and check the rule fires, so that guards
// written by hand cannot drift from what the spec says they decide.
type Example struct {
	Name string
	Rule *Rule
	// In is the state at rest the example starts in, and Send the event
	// it sends.
	In   *State
	Send *Event
	// State and Event are the JSON of the state and the event, as
	// UnmarshalState and UnmarshalEvent read them.
	State, Event string
	Pos          diag.Pos
	// src is, for an example a region's build resolved, the spec's
	// example, whose state the join reads (see regexamples.go); nil once
	// resolved.
	src *spec.Example
}

// pendingExamples are the examples of one outcome of the spec and the
// rules it gave, resolved once the rules are numbered.
type pendingExamples struct {
	examples []spec.Example
	rules    []*Rule
}

// examples resolves every example: its rule, its state and event, and the
// JSON of their fields, checked against the fields' types.
func (b *builder) examples() {
	m := b.m
	for _, pe := range b.pendingEx {
		for _, ex := range pe.examples {
			if e := b.example(ex, pe.rules); e != nil {
				m.Examples = append(m.Examples, e)
			}
		}
	}
	if b.par != nil && b.par.region != nil {
		return // the machine's build asks for the behaviour
	}
	// The examples of the regions' rules are the regions' builds'.
	var first []diag.Pos
	for _, pe := range b.pendingEx {
		first = append(first, pe.examples[0].Pos)
	}
	if b.par != nil {
		first = append(first, b.par.examples...)
	}
	// A spec without guards and effects has no behaviour: its examples
	// run through the rules alone.
	needs := len(b.f.Guards) > 0 || len(b.f.Effects) > 0
	switch {
	case len(first) > 0 && !b.f.Behavior.Set && needs:
		b.errorf(first[0], "examples run through the real behaviour: say under \"behavior\" how to make it, e.g. behavior: mypkg.New()")
	case b.f.Behavior.Set && !needs:
		b.diags.Warnf(b.f.Behavior.Pos, "behavior is given, but the spec declares no guard or effect for it to hold: remove it")
	case b.f.Behavior.Set && len(first) == 0:
		b.diags.Warnf(b.f.Behavior.Pos, "behavior is given, but no rule has examples to run through it")
	}
	slices.SortStableFunc(m.Examples, func(x, y *Example) int { return x.Rule.Index - y.Rule.Index })
}

// example resolves one example of the rules one outcome gave.
func (b *builder) example(ex spec.Example, rules []*Rule) *Example {
	if len(rules) == 0 {
		return nil
	}
	r := rules[0]
	out := &Example{Name: strings.TrimSpace(ex.Name.Value), Pos: ex.Pos}
	region := b.par != nil && b.par.region != nil
	if region {
		// The region's leaf may come from the example's state; the
		// join reads the rest of it.
		in, ok := b.regionIn(ex, out.Name)
		if !ok {
			return nil
		}
		ex.In, out.src = in, &ex
	}
	if ex.Send.Set {
		// A row with several events gave a rule for each: the example
		// takes the one of the event it sends.
		if send, ok := b.events[ex.Send.Value]; ok {
			if i := slices.IndexFunc(rules, func(q *Rule) bool { return q.Event == send }); i >= 0 {
				r = rules[i]
			}
		}
	}
	if b.par.leaves(r) {
		return b.leavingExample(ex, r, out) // see parleaveexamples.go
	}
	if ex.In.Set {
		in := b.state(ex.In)
		if in == nil {
			return nil
		}
		if in.Composite() || in.Transient {
			b.errorf(ex.In.Pos, "example %q starts in %s, which the machine never rests in: name a state at rest", out.Name, in.Name)
			return nil
		}
		out.In = in
		for _, q := range rules {
			if q.From != nil && q.From.Contains(in) && q.Event == r.Event {
				r = q
			}
		}
	} else {
		switch {
		case r.From == nil || r.From.Composite():
			if users := b.users[b.cellOf[r]]; len(users) > 0 {
				out.In = users[0]
			}
		case r.From.Choice == nil || r.From.Waits && r.Event != nil:
			out.In = r.From
		}
		if out.In == nil {
			b.errorf(ex.Pos, "example %q needs \"in\": the state at rest to start from, from which an event leads to this rule", out.Name)
			return nil
		}
	}
	out.Rule = r
	out.Send = r.Event
	if ex.Send.Set {
		if out.Send = b.event(ex.Send); out.Send == nil {
			return nil
		}
	}
	if out.Send == nil {
		b.errorf(ex.Pos, "example %q needs \"send\": the event that leads to this eventless rule", out.Name)
		return nil
	}
	fires := false
	for _, e := range b.edges(node{leaf: out.In}) {
		for _, w := range e.ways(out.In) {
			if w.Event == out.Send && slices.Contains(w.Rules, r) {
				fires = true
			}
		}
	}
	if !fires {
		b.errorf(ex.Pos, "example %q cannot take %s: sending %s in %s never leads to it", out.Name, r.Label, out.Send.Name, out.In.Name)
		return nil
	}
	var stateOK, eventOK bool
	if !region && b.par != nil && b.specOf[out.In] != nil && b.specOf[out.In].Parallel.Value {
		// The state is a parallel state, whose value names its regions'
		// leaves: the join writes it (see regexamples.go).
		region, out.src = true, &ex
	}
	if region {
		// The state is the parallel state's: the join writes it.
		if out.Event, eventOK = b.exampleJSON(out.Name, "event", &out.Send.Decl, ex.Event); !eventOK {
			return nil
		}
		return out
	}
	out.State, stateOK = b.exampleJSON(out.Name, "state", &out.In.Decl, ex.State)
	out.Event, eventOK = b.exampleJSON(out.Name, "event", &out.Send.Decl, timerFired(r, restored(out.In), ex.Event))
	if !stateOK || !eventOK {
		return nil
	}
	return out
}

// timerFired returns the event fields of an example that sends
// TimerFired to rule r, a timer's: the timer's id in run, the timers a
// machine Restore puts in the example's state runs, numbered from 1 (see
// restored and restoredIn), unless the example gives one. Without it the
// machine would take the event for a timer no longer running, and ignore
// it. Other rules' fields are as given.
func timerFired(r *Rule, run timerRun, fields []spec.Value) []spec.Value {
	if r.Timer == nil || slices.ContainsFunc(fields, func(v spec.Value) bool { return v.Name.Value == "timer" }) {
		return fields
	}
	id := run.ids[r.Timer]
	if id == 0 {
		return fields // not a timer the state runs: example found no way to r
	}
	return append([]spec.Value{{Name: spec.String{Value: "timer"}, Value: id, Tag: "!!int"}}, fields...)
}

// exampleJSON writes the JSON of a state or event with the given field
// values, {"kind": ..., fields in spec order}, checking that each field
// exists and that a scalar fits a field of a basic type. Values of other
// types are checked when the generated test decodes them.
func (b *builder) exampleJSON(name, what string, d *Decl, values []spec.Value) (string, bool) {
	var sb strings.Builder
	kind, _ := json.Marshal(d.Snake)
	sb.WriteString(`{"kind":` + string(kind))
	ok := true
	for _, v := range values {
		f := d.Field(v.Name.Value)
		if f == nil {
			var names []string
			for _, f := range d.Fields {
				names = append(names, f.Name)
			}
			b.errorf(v.Name.Pos, "example %q: %s %s has no field %s (its fields: %s)", name, what, d.Name, v.Name.Value, strings.Join(names, ", "))
			ok = false
			continue
		}
		if want := scalarTag(f.Type); want != "" && v.Tag != want && !(want == "!!float" && v.Tag == "!!int") {
			b.errorf(v.Pos, "example %q: %s is %s, but the value is not one (%v)", name, f.Name, f.Type, v.Value)
			ok = false
			continue
		}
		data, err := json.Marshal(v.Value)
		if err != nil {
			b.errorf(v.Pos, "example %q: the value of %s cannot be written as JSON: %v", name, f.Name, err)
			ok = false
			continue
		}
		key, _ := json.Marshal(f.JSONName)
		sb.WriteString("," + string(key) + ":" + string(data))
	}
	sb.WriteString("}")
	return sb.String(), ok
}

// scalarTag returns the YAML tag a value of a predeclared basic type has,
// or "" for other types.
func scalarTag(t string) string {
	switch t {
	case "string":
		return "!!str"
	case "bool":
		return "!!bool"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr", "byte", "rune":
		return "!!int"
	case "float32", "float64":
		return "!!float"
	}
	return ""
}

// behavior checks the Go expression that makes the real Behavior and
// resolves it for the examples' test. The expression may name the spec's
// imports and, qualified with an import of it or unqualified, what the
// hand-written files of the output package declare. It is written into
// the test as the spec writes it: its packages may not load before the
// package is generated (the output package itself, or a package that
// imports it), so what fsmgen generates never depends on them; the
// compiler checks the expression there. When its packages load, fsmgen
// type-checks it at once: it must give a value, or a value and an error.
func (b *builder) behavior() {
	s := b.f.Behavior
	if !s.Set {
		return
	}
	m := b.m
	m.Behavior = strings.TrimSpace(s.Value)
	expr, err := parser.ParseExpr(m.Behavior)
	if err != nil {
		b.errorf(s.Pos, "behavior %q is not a Go expression: %v", m.Behavior, err)
		return
	}
	supported := true
	ast.Inspect(expr, func(n ast.Node) bool {
		switch n.(type) {
		case nil, *ast.Ident, *ast.BasicLit, *ast.SelectorExpr, *ast.CallExpr, *ast.UnaryExpr, *ast.ParenExpr, *ast.CompositeLit, *ast.KeyValueExpr:
		default:
			supported = false
		}
		return true
	})
	if !supported {
		b.errorf(s.Pos, "behavior %q: write a call, a name or a composite literal, e.g. mypkg.New(mypkg.Config{Retries: 3})", m.Behavior)
		return
	}
	quals, own := behaviorNames(expr)
	ok := true
	for _, q := range quals {
		imp := b.imports[q.qual]
		if imp == nil {
			b.errorf(s.Pos, "behavior names %s, which is not one of the spec's imports: add it under imports", q.qual)
			ok = false
			continue
		}
		imp.used = true
		if b.self(imp.Path.Value) {
			own = append(own, q.name)
		}
	}
	if !ok {
		return
	}
	local := map[string]bool{}
	for _, name := range own {
		if b.env.PackagePath != "" && !slices.Contains(b.env.LocalNames, name) {
			b.errorf(s.Pos, "behavior %q names %s, which no hand-written file of the output package declares: declare it there, or name a package of the spec's imports (pkg.%s)%s",
				m.Behavior, name, name, suggest.DidYouMean(name, b.env.LocalNames))
			return
		}
		local[name] = true
		// The external test package sees only exported names.
		m.ExamplesInPackage = m.ExamplesInPackage || !token.IsExported(name)
	}
	m.BehaviorCode = b.exprCode(m.Behavior, local)
	if len(own) > 0 || b.env.Import == nil {
		return // the output package is checked by the compiler once generated
	}
	b.checkBehavior(s, expr, quals)
}

// qualName is a name of an imported package, as pkg.Name.
type qualName struct{ qual, name string }

// behaviorNames returns the qualified names the behavior expression
// uses, and the names it uses unqualified that are not Go's predeclared
// ones (which, in the generated test, are the output package's). The
// field names of composite literals are neither.
func behaviorNames(expr ast.Expr) (quals []qualName, own []string) {
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				quals = append(quals, qualName{id.Name, n.Sel.Name})
			} else {
				ast.Inspect(n.X, visit)
			}
			return false
		case *ast.CompositeLit:
			if n.Type != nil {
				ast.Inspect(n.Type, visit)
			}
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if _, isField := kv.Key.(*ast.Ident); isField {
						ast.Inspect(kv.Value, visit)
						continue
					}
				}
				ast.Inspect(e, visit)
			}
			return false
		case *ast.Ident:
			if types.Universe.Lookup(n.Name) == nil && !slices.Contains(own, n.Name) {
				own = append(own, n.Name)
			}
		}
		return true
	}
	ast.Inspect(expr, visit)
	return quals, own
}

// checkBehavior type-checks the behavior expression when every package it
// names loads. One that does not load because it imports the output
// package, not generated yet, leaves the check to the compiler.
func (b *builder) checkBehavior(s spec.String, expr ast.Expr, quals []qualName) {
	m := b.m
	pkg := types.NewPackage("fsmgen/examples", "examples")
	for _, q := range quals {
		imp := b.imports[q.qual]
		p, err := b.env.Import(imp.Path.Value)
		if errors.Is(err, ErrNeedsGenerated) {
			return
		}
		if err != nil || p == nil {
			b.errorf(s.Pos, "cannot load package %q, which behavior names: %v", imp.Path.Value, err)
			return
		}
		if pkg.Scope().Lookup(q.qual) == nil {
			pkg.Scope().Insert(types.NewPkgName(token.NoPos, pkg, q.qual, p))
		}
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if err := types.CheckExpr(token.NewFileSet(), pkg, token.NoPos, expr, info); err != nil {
		msg := err.Error()
		if te, ok := err.(types.Error); ok {
			msg = te.Msg // without the position, which is not in the spec
		}
		b.errorf(s.Pos, "behavior %q: %s", m.Behavior, msg)
		return
	}
	tv := info.Types[expr]
	if tuple, ok := tv.Type.(*types.Tuple); ok {
		if tuple.Len() != 2 || !types.Identical(tuple.At(1).Type(), types.Universe.Lookup("error").Type()) {
			b.errorf(s.Pos, "behavior %q gives %s: it must give the Behavior, or the Behavior and an error", m.Behavior, tuple)
		}
	}
}
