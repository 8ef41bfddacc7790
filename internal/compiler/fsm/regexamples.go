package fsm

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file runs the examples of the rules inside the regions of parallel
// states. A region's build resolves an example within the region: its
// rule, the leaf it starts in and the event it sends (regionIn). Once the
// regions are joined, regionExamples starts the machine in the parallel
// state with the rule's region in that leaf, the other regions in the
// leaves the example's state names or else their Resting ones, and
// checks that the event leads to the rule there, the other regions'
// rules and guards In(State) taken into account.

// regionIn returns the state an example of a rule of the region a
// region's build builds starts in: its "in", or the leaf its state gives
// the region's field; unset when it gives neither. It reports false,
// having said why, when "in" names a state outside the region or the two
// disagree.
func (b *builder) regionIn(ex spec.Example, name string) (spec.String, bool) {
	r := b.par.region
	field := r.root.Name.Value
	in := ex.In
	if in.Set && b.states[in.Value] == nil {
		if other := regionOfLeaf(in.Value, r.par); other != "" {
			b.errorf(in.Pos, "example %q starts in %s, in region %s, not in region %s of parallel state %s, whose rule it takes: name a leaf of %s under \"in\", and give the other regions' leaves under \"state\" (state: {%s: %s})",
				name, in.Value, other, field, r.par.Name.Value, field, SnakeName(other), SnakeName(in.Value))
		} else {
			b.errorf(in.Pos, "example %q starts in %s, outside region %s of parallel state %s, whose rule it takes: name a leaf of %s under \"in\"", name, in.Value, field, r.par.Name.Value, field)
		}
		return in, false
	}
	for _, v := range ex.State {
		if !regionKey(v.Name.Value, field) {
			continue
		}
		leaf, _ := v.Value.(string)
		st := b.stateNamed(leaf)
		switch {
		case st == nil:
			b.errorf(v.Pos, "example %q puts region %s in %v, which is not a state of it: name one of its leaves", name, field, v.Value)
			return in, false
		case in.Set && b.states[in.Value] != st:
			b.errorf(v.Pos, "example %q starts in %s, but its state puts region %s in %s: give the leaf once", name, in.Value, field, st.Name)
			return in, false
		}
		in = spec.String{Value: st.Name, Pos: v.Pos, Set: true}
	}
	return in, true
}

// regionOfLeaf returns the name of the innermost region of parallel
// state par that holds the state named leaf; "" when none does.
func regionOfLeaf(leaf string, par *spec.State) string {
	var walk func(list []spec.State, region string) string
	walk = func(list []spec.State, region string) string {
		for _, s := range list {
			if s.Name.Value == leaf {
				return region
			}
			if s.Parallel.Value {
				if got := regionOfLeaf(leaf, &s); got != "" {
					return got
				}
				continue
			}
			if got := walk(s.States, region); got != "" {
				return got
			}
		}
		return ""
	}
	for _, r := range par.States {
		if got := walk(r.States, r.Name.Value); got != "" {
			return got
		}
	}
	return ""
}

// regionKey reports whether key, a field an example's state gives, names
// the region whose own state is root: by its spec name or its JSON
// member.
func regionKey(key, root string) bool { return key == root || key == SnakeName(root) }

// stateNamed returns the state the build knows by spec name or JSON kind;
// nil when none.
func (b *builder) stateNamed(name string) *State {
	if st := b.states[name]; st != nil {
		return st
	}
	for _, st := range b.all {
		if st.Snake == name {
			return st
		}
	}
	return nil
}

// regionExamples resolves the examples that start in a parallel state:
// those the regions' builds gave, and those of the parallel states' own
// rules, which the machine's build left for the join. Each starts in its
// parallel state, its state JSON that of the parallel state, with every
// region's leaf. m.Examples then holds them, in rule order.
func regionExamples(m *Machine, regions []*specRegion, diags *diag.List) {
	b := &builder{m: m}
	var todo, done []*Example
	for _, ex := range m.Examples {
		if ex.src != nil {
			todo = append(todo, ex)
		} else {
			done = append(done, ex)
		}
	}
	for _, sr := range regions {
		todo = append(todo, sr.build.Examples...)
	}
	for _, ex := range todo {
		if e := b.regionExample(ex); e != nil {
			done = append(done, e)
		}
	}
	*diags = append(*diags, b.diags...)
	slices.SortStableFunc(done, func(x, y *Example) int { return x.Rule.Index - y.Rule.Index })
	m.Examples = done
}

// regionExample resolves example ex that starts in a parallel state: of
// a region's rule, which its region's build checked within the region,
// or of the parallel state's own rule.
func (b *builder) regionExample(ex *Example) *Example {
	p := ex.In
	if ex.In.Region != nil {
		p = ex.In.Region.Parallel
	}
	cfg, rest, ok := b.regionConfig(ex, p)
	if !ok {
		return nil
	}
	send := eventNamed(b.m, ex.Send) // a region's build's event is its own
	fires := false
	for _, w := range b.regionExampleWays(p, cfg, send, ex.Rule.Timer) {
		fires = fires || slices.Contains(w.Rules, ex.Rule)
	}
	if !fires {
		var at []string
		for _, o := range p.Flat {
			if cfg[o.Index] != nil {
				at = append(at, o.Root.Name+" in "+cfg[o.Index].Name)
			}
		}
		b.errorf(ex.Pos, "example %q cannot take %s: sending %s in %s with %s never leads to it (another region's rule or guard decides first); put the regions elsewhere under \"state\"",
			ex.Name, ex.Rule.Label, send.Name, p.Name, strings.Join(at, ", "))
		return nil
	}
	state, ok := b.exampleJSON(ex.Name, "state", &p.Decl, rest)
	if !ok {
		return nil
	}
	var sb strings.Builder
	sb.WriteString(strings.TrimSuffix(state, "}"))
	for _, o := range p.Flat {
		if cfg[o.Index] != nil {
			key, _ := json.Marshal(o.JSON)
			kind, _ := json.Marshal(cfg[o.Index].Snake)
			sb.WriteString("," + string(key) + ":" + string(kind))
		}
	}
	sb.WriteString("}")
	out := *ex
	if ex.Rule.Timer != nil {
		// The TimerFired of the timer Restore numbers in that configuration.
		if out.Event, ok = b.exampleJSON(ex.Name, "event", &send.Decl, timerFired(ex.Rule, restoredIn(p, cfg), ex.src.Event)); !ok {
			return nil
		}
	}
	out.In, out.Send, out.State, out.src = p, send, sb.String(), nil
	return &out
}

// regionExampleWays returns the ways an example's event takes in
// parallel state p in configuration cfg: those of timer t when the
// example sends its TimerFired (a region's timer in its region alone,
// the parallel state's own by its branches, which no region sees),
// else those of event e.
func (b *builder) regionExampleWays(p *State, cfg []*State, e *Event, t *Timer) []*Way {
	var out []*Way
	switch {
	case t == nil:
		for _, w := range b.m.regionWays(p, cfg, e) {
			out = append(out, w.way)
		}
	case t.State.Region != nil:
		for _, w := range b.m.regionTimerWays(p, cfg, t) {
			out = append(out, w.way)
		}
	default:
		for _, pk := range picks(t.Cell, cfg) {
			if pk.rule != nil {
				out = append(out, &Way{Rules: []*Rule{pk.rule}})
			}
		}
	}
	return out
}

// regionConfig returns the leaves the regions of parallel state p start
// an example in: the rule's region, for a region's rule, in the
// example's leaf, a region that holds it (a parallel state inside a region's
// state) in that state, the regions the example's state names in those
// leaves, the others in their Resting leaves. It returns the state's
// other values, the parallel state's fields. It reports false, having
// said why, when the example puts a region where Restore does not.
func (b *builder) regionConfig(ex *Example, p *State) ([]*State, []spec.Value, bool) {
	reg := ex.In.Region // nil for the parallel state's own rule
	set := map[*Region]*State{}
	if reg != nil {
		set[reg] = ex.In
	}
	if ex.Rule.Source != nil {
		// A rule that leaves p from inside a region: its source's region
		// (see parleaveexamples.go).
		leaf, ok := b.leavingConfig(ex)
		if !ok {
			return nil, nil, false
		}
		reg = leaf.Region
		set[reg] = leaf
	}
	var rest []spec.Value
	ok := true
	for _, v := range ex.src.State {
		i := slices.IndexFunc(p.Flat, func(o *Region) bool { return regionKey(v.Name.Value, o.Root.Name) })
		if i < 0 {
			if p.Decl.Field(v.Name.Value) == nil {
				var names []string
				for _, f := range p.Decl.Fields {
					names = append(names, f.Name)
				}
				for _, o := range p.Flat {
					names = append(names, o.Root.Name)
				}
				b.errorf(v.Name.Pos, "example %q: state %s has no field or region %s (its fields and regions: %s)", ex.Name, p.Name, v.Name.Value, strings.Join(names, ", "))
				ok = false
				continue
			}
			rest = append(rest, v)
			continue
		}
		o := p.Flat[i]
		if reg != nil && o == reg {
			continue // the leaf its region's build took for the example's
		}
		name, _ := v.Value.(string)
		j := slices.IndexFunc(o.Leaves, func(s *State) bool { return s.Name == name || s.Snake == name })
		switch {
		case j < 0:
			b.errorf(v.Pos, "example %q puts region %s in %v, which is not a leaf of it: name one of %s", ex.Name, o.Root.Name, v.Value, leafNames(o))
			ok = false
		case o.Leaves[j].Settles() && !o.Leaves[j].Rests():
			b.errorf(v.Pos, "example %q puts region %s in %s, which it leaves in the step that enters it (a transient state, or a final state a done transition leaves): the machine never rests there; name a leaf it rests in", ex.Name, o.Root.Name, o.Leaves[j].Name)
			ok = false
		default:
			set[o] = o.Leaves[j]
		}
	}
	for h := reg; h != nil && h.Host != nil; h = h.Host {
		// The rule's region holds a leaf only while its host is in the
		// parallel state that holds it.
		if at, given := set[h.Host]; given && at != h.Within {
			b.errorf(ex.Pos, "example %q puts region %s in %s, but the rule's region %s is a region of %s, inside it: put %s in %s", ex.Name, h.Host.Root.Name, at.Name, reg.Root.Name, h.Within.Name, h.Host.Root.Name, h.Within.Name)
			return nil, nil, false
		}
		set[h.Host] = h.Within
	}
	cfg := make([]*State, len(b.m.Regions))
	for _, o := range p.Flat {
		at, given := set[o]
		switch {
		case o.Host != nil && cfg[o.Host.Index] != o.Within:
			if given {
				b.errorf(ex.Pos, "example %q puts region %s in %s, but %s holds a leaf only while region %s is in %s: put %s there, or leave %s out", ex.Name, o.Root.Name, at.Name, o.Root.Name, o.Host.Root.Name, o.Within.Name, o.Host.Root.Name, o.Root.Name)
				ok = false
			}
		case given:
			cfg[o.Index] = at
		default:
			cfg[o.Index] = o.Resting()
		}
	}
	if ok && p.completes(cfg) && !p.RestsFinal() {
		b.errorf(ex.Pos, "example %q puts every region of %s in a final state, which its done transition leaves at once: the machine never rests there; put a region elsewhere under \"state\"", ex.Name, p.Name)
		ok = false
	}
	return cfg, rest, ok
}

// leafNames lists the leaves of region reg, for a message.
func leafNames(reg *Region) string {
	var names []string
	for _, s := range reg.Leaves {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}
