package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// buildParallel builds a spec with parallel states: each region on its
// own, then the machine around them with each parallel state a leaf, and
// joins them (see parallel.go).
func buildParallel(f *spec.File, env Env) (*Machine, diag.List) {
	var diags diag.List
	regions := regionsOf(f.States, &diags, nil, nil)
	lifts := newLifts()
	leaves := newLeaving()
	ents := newEntering(f, regions)
	outer, rows := splitRows(f, regions, lifts, leaves, ents, &diags)
	groupRejects(regions, rows, &diags)
	groupLists(regions, rows, &diags)
	groupTimers(regions, f.Transitions, &diags)
	lifts.timers(regions, &diags)
	outer.States = lifts.apply(outer.States)
	ents.rewrite(outer.States, &diags)
	if diags.HasErrors() {
		diags.Sort()
		return nil, diags
	}
	hook := &parHook{covered: map[string]map[string]bool{}, reaches: map[string]map[string]string{}, used: map[string]bool{}, leaving: leaves.names, owns: leaves.owns, elses: leaves.elses, passes: leaves.passes, leaveTimers: leaves.timers, quiet: leaves.quiet, sources: leaves.sources(), entering: ents}
	groupDones(f.States, regions, hook, &diags)
	var lifted []*Timer // the timers the regions' builds resolved (see leavingTimers)
	for _, r := range regions {
		sub := regionSpec(f, r, rows[r], lifts)
		rh := &parHook{region: r, passes: leaves.passes, entering: ents, leaving: leaves.names, elses: leaves.elses, leaveTimers: leaves.liftTimers[r]}
		m, ds := build(sub, env, rh)
		lifted = append(lifted, rh.leftTimers...)
		diags = append(diags, ds.Errors()...)
		diags = append(diags, nowhere(r, ds)...)
		if m == nil {
			continue
		}
		r.build = m
		r.ins = rh.ins
		hook.stuck = append(hook.stuck, r.stuck...)
		hook.timers = append(hook.timers, m.Timers...)
		for _, ex := range m.Examples {
			hook.examples = append(hook.examples, ex.Pos)
		}
		useNames(m, hook.used)
	}
	if diags.HasErrors() {
		diags.Sort()
		return nil, diags
	}
	groupUses(regions, hook.used)
	hook.retests = retesting(f, regions, hook.used)
	for range hostingDepth(regions) + 1 {
		// A parallel state inside a region takes the events its regions
		// cover: the innermost first.
		coverage(regions, hook)
	}
	regionRules(regions, hook)
	hook.regionDefers = regionDeferrals(regions)
	for _, r := range regions {
		for _, s := range r.build.States {
			line := "region " + snakeOf(r.par) + "." + r.build.Initial.Path()[0].Snake + " state " + s.Snake
			for _, a := range s.Path() {
				for _, t := range a.Timers {
					// A saved machine holds the timer, under its state.
					line += " timer " + a.Snake
					if t.ID != "" {
						line += "." + t.ID
					}
				}
			}
			hook.shape = append(hook.shape, line)
			if s.Transient {
				// A transient state, or a final state whose composite
				// state has a done transition: the region never rests
				// there.
				hook.shape = append(hook.shape, "region "+snakeOf(r.par)+"."+r.build.Initial.Path()[0].Snake+" done "+s.Snake)
			}
			if s.Final && s.Depth == 1 && (r.par.Done != nil || slices.ContainsFunc(r.groups, func(g *spec.State) bool { return g.Done != nil })) {
				// A machine never rests with every region final: which
				// states are final says what loads.
				hook.shape = append(hook.shape, "region "+snakeOf(r.par)+"."+r.build.Initial.Path()[0].Snake+" final "+s.Snake)
			}
		}
	}
	hook.shape = append(hook.shape, regionHistoryShape(regions)...)
	hook.shape = append(hook.shape, memoryShape(f.States, regions)...)
	for _, r := range regions {
		hook.shape = append(hook.shape, r.build.deferredShape()...)
	}
	m, ds := build(outer, env, hook)
	diags = append(diags, ds...)
	if m == nil {
		diags.Sort()
		return nil, diags
	}
	// The timers the regions' builds resolved join those the machine's
	// did, for swapTimers.
	hook.leftTimers = append(hook.leftTimers, lifted...)
	join(m, regions, hook, &diags)
	regionRenames(m, &diags)
	if !diags.HasErrors() {
		regionExamples(m, regions, &diags)
	}
	diags.Sort()
	if diags.HasErrors() {
		return nil, diags
	}
	return m, diags
}

// coverage records, for each parallel state, the events that never reach
// it (hook.covered), which it needs no rule for:
//   - an event some region takes in every state it rests in (SCXML 1.0
//     §3.13: a descendant's transition preempts its ancestor's);
//   - for a parallel state with a done transition that always leaves it,
//     an event that every region leaves to it only in its final states:
//     the machine never rests with every region final, since the done
//     transition leaves the parallel state in the step that makes the
//     last one final (one whose guards may all fail may rest so); and so
//     for a parallel state nested as its regions with a done transition
//     (which always leaves), whose regions leave it only so.
//
// A leaf whose composite state's done transition leaves it at once is
// never rested in, and offered nothing.
func coverage(regions []*specRegion, hook *parHook) {
	type tally struct {
		regions, taking, finalOnly int
		// open lists, region by region, the states that leave the event
		// to the parallel state ("region Check is in Hashing or
		// Hashed"); never, the regions that take it in no state;
		// guarded, those that may leave it in every state, but only when
		// guards of theirs do not hold.
		open, never, guarded []string
		// ended counts, for each parallel state nested as a region that
		// has a done transition, its regions that take the event in
		// every state but their final ones.
		ended map[*spec.State]int
	}
	counts := map[string]map[string]*tally{}
	nregions := map[string]int{}
	ngroup := map[*spec.State]int{}
	for _, r := range regions {
		par := r.par.Name.Value
		nregions[par]++
		for _, g := range r.groups {
			ngroup[g]++
		}
		if counts[par] == nil {
			counts[par] = map[string]*tally{}
		}
		root := r.build.Initial.Path()[0]
		for _, e := range r.build.Events {
			t := counts[par][e.Name]
			if t == nil {
				t = &tally{}
				counts[par][e.Name] = t
			}
			t.regions++
			takes, finalOnly, ruled := true, true, false
			var open []string
			resting := 0
			for _, s := range r.build.States {
				if !s.Transient {
					resting++
				}
				if s.Transient || inside(s.Cell(e)) || hook.covered[s.Name][e.Name] || hook.leavesFrom(par, e.Name, s) {
					continue
				}
				takes = false
				finalOnly = finalOnly && s.Final && s.Parent == root
				open = append(open, s.Name)
				if c := s.Cell(e); c != nil && !c.Out() {
					ruled = true // a rule whose guards may all fail
				}
			}
			switch {
			case len(open) == resting && ruled:
				t.guarded = append(t.guarded, r.root.Name.Value)
			case len(open) == resting:
				t.never = append(t.never, r.root.Name.Value)
			case len(open) > 0:
				t.open = append(t.open, fmt.Sprintf("region %s is in %s", r.root.Name.Value, joinOr(open)))
			}
			if takes {
				t.taking++
			} else if finalOnly {
				t.finalOnly++
			}
			for _, g := range r.groups {
				if (takes || finalOnly) && slices.Contains(hook.groupDones[par], g) && !mayRefuse(g.Done) {
					if t.ended == nil {
						t.ended = map[*spec.State]int{}
					}
					t.ended[g]++
				}
			}
		}
	}
	for _, r := range regions {
		par := r.par.Name.Value
		if hook.covered[par] == nil {
			hook.covered[par] = map[string]bool{}
		}
		if hook.reaches[par] == nil {
			hook.reaches[par] = map[string]string{}
		}
		for e, t := range counts[par] {
			hook.covered[par][e] = t.taking > 0 || (r.par.Done != nil && !mayRefuse(r.par.Done) && t.regions == nregions[par] && t.finalOnly == t.regions)
			for g, n := range t.ended {
				// The regions of g leave e only when all are final,
				// which g's done transition always leaves (see
				// parnestdone.go).
				hook.covered[par][e] = hook.covered[par][e] || n == ngroup[g]
			}
			hook.reaches[par][e] = reachWhere(t.open, t.never, t.guarded)
		}
	}
}

// reachWhere says when an event reaches a parallel state: "when region
// Check is in Hashed (region Transfer never takes it)", "when region
// Steps is in Passed and no guard of region Logs holds", or "whatever
// state its regions are in" when none takes it.
func reachWhere(open, never, guarded []string) string {
	where := "whatever state its regions are in"
	if len(open) > 0 {
		where = "when " + strings.Join(open, " and ")
	}
	if len(guarded) > 0 {
		if len(open) == 0 {
			where += ", when"
		} else {
			where += " and"
		}
		where += " no guard of " + regionList(guarded) + " holds"
	}
	switch {
	case len(never) == 0 || len(open)+len(guarded) == 0:
	case len(never) == 1:
		where += fmt.Sprintf(" (region %s never takes it)", never[0])
	default:
		where += fmt.Sprintf(" (%s never take it)", regionList(never))
	}
	return where
}

// regionList names regions: "region Logs", "regions Logs and Net".
func regionList(names []string) string {
	if len(names) == 1 {
		return "region " + names[0]
	}
	return "regions " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// snakeOf is the JSON kind of a state the spec names.
func snakeOf(s *spec.State) string { return SnakeName(s.Name.Value) }

// inside reports whether a region's cell resolves its event inside the
// region, whatever its guards answer.
func inside(c *Cell) bool {
	return c != nil && !c.Out() && (c.Fallback == nil || inside(c.Fallback))
}

// retesting returns, by name, the parallel states of the spec after every
// step that keeps the machine in them eventless rules are tested: a state
// of their regions (at any depth) waits, or they have eventless rows of
// their own (see State.Awaits). The events their regions ignore it
// records as used: ignoring one is a step whose eventless rules may move
// the machine (a Tick that asks states that wait again, say).
func retesting(f *spec.File, regions []*specRegion, used map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, r := range regions {
		if slices.ContainsFunc(r.build.States, func(s *State) bool { return s.Waits }) {
			out[r.top.Name.Value] = true
		}
	}
	for _, t := range f.Transitions {
		if len(t.On) > 0 {
			continue
		}
		for _, n := range t.From {
			if slices.ContainsFunc(regions, func(r *specRegion) bool { return r.top.Name.Value == n.Value }) {
				out[n.Value] = true
			}
		}
	}
	for _, r := range regions {
		if !out[r.top.Name.Value] {
			continue
		}
		for _, rule := range r.build.Rules {
			if rule.Kind == Ignore && rule.Event != nil && rule.From != nil {
				// (A "*" row of a region's build stands for the
				// events it leaves to the parallel state.)
				used["event "+rule.Event.Name] = true
			}
		}
	}
	return out
}

// useNames records the events, actions and guards a region's rules use.
func useNames(m *Machine, used map[string]bool) {
	for _, r := range m.Rules {
		if r.From == nil {
			continue
		}
		if r.Kind == Transition && r.Event != nil {
			used["event "+r.Event.Name] = true
		}
		if r.Guard != nil {
			used["guard "+r.Guard.Name] = true
		}
		if r.Effect != nil {
			used["effect "+r.Effect.Name] = true
		}
		for _, e := range r.Actions {
			used["action "+e.Action.Name] = true
		}
		for _, run := range append(append([]*Run{}, r.Exits...), r.Entries...) {
			for _, e := range run.Actions {
				used["action "+e.Action.Name] = true
			}
		}
	}
	for _, t := range m.Timers {
		if t.DelayFunc != nil {
			used["effect "+t.DelayFunc.Name] = true
		}
	}
	// Every state of a region is left when its parallel state is.
	for _, s := range append(append([]*State{}, m.Composites...), m.States...) {
		for _, h := range []*Hook{s.Entry, s.Exit} {
			if h != nil {
				for _, a := range h.Actions {
					used["action "+a.Name] = true
				}
				if h.Effect != nil {
					used["effect "+h.Effect.Name] = true
				}
			}
		}
	}
}

// splitRows parts the spec's transitions: those of the states inside each
// region go to the region's build, the others stay; a row that lists
// states of both is split. It returns the spec of the machine around the
// parallel states, each of which is a leaf there, and records in lifts
// what the rows of parallel states nested as regions change in the
// parallel states they are regions of (see parnestlift.go).
func splitRows(f *spec.File, regions []*specRegion, lifts *lifts, leaves *leaving, ents *entering, diags *diag.List) (*spec.File, map[*specRegion][]spec.Transition) {
	regionOf := map[string]*specRegion{}
	groups := map[string]*specRegion{}
	for _, r := range regions {
		for n := range r.names {
			regionOf[n] = r
		}
	}
	for _, r := range regions {
		for _, g := range r.groups {
			if groups[g.Name.Value] != nil {
				continue
			}
			groups[g.Name.Value] = r
			if o := regionOf[g.Name.Value]; o != nil {
				diags.Errorf(g.Name.Pos, "state %s is declared twice (also in region %s of %s): state names are unique across the whole machine", g.Name.Value, o.root.Name.Value, o.par.Name.Value)
			}
		}
	}
	for _, r := range regions {
		for i := range r.timers {
			t := &r.timers[i]
			if ents.across(t, r, diags) {
				continue // into another region, refused (see parenter.go)
			}
			if leaves.timer(t, r, regionOf, lifts, diags) {
				continue // a timer that leaves the parallel state (see parleave.go)
			}
			if ents.inwardTimer(t, r, lifts, diags) {
				continue // into a parallel state inside a state of r (see parinward.go)
			}
			regionRow(t, r, regionOf, diags)
		}
		leaves.dones(r, regionOf, ents, diags)
		ents.inwardDones(r, lifts, diags)
	}
	leaves.keep(f.Transitions, regions, regionOf)
	rows := map[*specRegion][]spec.Transition{}
	outer := *f
	outer.Transitions = nil
	outer.States = leafParallels(f.States)
	for _, t := range f.Transitions {
		if len(groups) > 0 && groupRow(&t, groups, diags) {
			continue // refused, named
		}
		if placed, lift, ok := groupRule(t, groups, regions, f.Transitions, lifts, diags); ok {
			// A row of a parallel state nested as a region: rows of
			// its regions' own states (see parnestrules.go), or of the
			// parallel state it is a region of (see parnestlift.go).
			for _, r := range regions {
				for _, o := range placed[r] {
					regionRow(&o, r, regionOf, diags)
					rows[r] = append(rows[r], o)
				}
			}
			if lift == nil {
				continue
			}
			t = *lift
		}
		var out []spec.String
		by := map[*specRegion][]spec.String{}
		var order []*specRegion
		for _, n := range t.From {
			r := regionOf[n.Value]
			if r == nil {
				out = append(out, n)
				continue
			}
			if by[r] == nil {
				order = append(order, r)
			}
			by[r] = append(by[r], n)
		}
		if len(out) > 0 {
			o := t
			o.From = out
			ents.row(&o, diags) // a target inside a region (see parenter.go)
			outer.Transitions = append(outer.Transitions, o)
		}
		for _, r := range order {
			o := t
			o.From = by[r]
			if ents.across(&o, r, diags) {
				continue // into another region, refused (see parenter.go)
			}
			if leaves.take(&o, r, regionOf, diags) {
				continue // a row that leaves the parallel state (see parleave.go)
			}
			if leaves.lift(&o, r, regionOf, diags) {
				continue // a row that leaves a parallel state inside a region's state (see parhostedlift.go)
			}
			if ents.inward(&o, r, diags) {
				continue // into a parallel state inside a state of r, refused (see parinward.go)
			}
			regionRow(&o, r, regionOf, diags)
			rows[r] = append(rows[r], o)
		}
	}
	leaves.merge(&outer, f.Transitions, regions, diags)
	leaves.liftRows(rows, ents, diags)
	return &outer, rows
}

// targets returns the targets a row names, its branches' included.
func targets(t *spec.Transition) []spec.String {
	var out []spec.String
	if t.To.Set {
		out = append(out, t.To)
	}
	for _, br := range t.Guards {
		if br.To.Set {
			out = append(out, br.To)
		}
	}
	return out
}

// regionRow checks a row of states inside region r: it moves within the
// region.
func regionRow(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion, diags *diag.List) {
	for _, from := range t.From {
		if r.finals[from.Value] {
			diags.Errorf(from.Pos, "region %s rests in its final state %s, which has no transitions of its own (SCXML 1.0 §3.7): the events it is offered go to the states around it; write the row from %s or from %s", r.root.Name.Value, from.Value, r.root.Name.Value, r.par.Name.Value)
		}
	}
	for _, to := range targets(t) {
		switch o := regionOf[strings.TrimSuffix(to.Value, historySuffix)]; {
		case o == r:
		case o != nil && o.within(r) != nil:
			q := o.within(r).par.Name.Value
			diags.Errorf(to.Pos, "region %s cannot move to %s, inside region %s of parallel state %s, yet: fsmgen does not enter a state inside a parallel state nested as a region inside parallel state %s; target %s itself", r.root.Name.Value, to.Value, o.root.Name.Value, o.par.Name.Value, q, q)
		case o != nil && o.par == r.par && r.host != nil:
			// (a parallel state inside a region's state: the others are
			// across's, see parenter.go, and its rows lift's, see
			// parhostedlift.go)
			diags.Errorf(to.Pos, "region %s cannot move to %s, in region %s of the same parallel state %s, by a timer's or an eventless rule yet: fsmgen leaves %s, inside region %s, and enters it again for a row on an event only; write the rule as a row on an event, or from %s", r.root.Name.Value, to.Value, o.root.Name.Value, r.par.Name.Value, r.par.Name.Value, r.host.root.Name.Value, r.par.Name.Value)
		case o != nil && o.par == r.par:
			diags.Errorf(to.Pos, "region %s cannot move to %s, in region %s of the same parallel state %s, this way yet; write the rule from %s, which leaves every region", r.root.Name.Value, to.Value, o.root.Name.Value, r.par.Name.Value, r.par.Name.Value)
		case o != nil && o.top != r.top:
			diags.Errorf(to.Pos, "parallel state %s is entered through all its regions at once: a transition from outside it cannot target %s inside region %s; target %s itself", o.par.Name.Value, to.Value, o.root.Name.Value, o.par.Name.Value)
		case r.host != nil && o == r.host && len(t.On) == 0:
			diags.Errorf(to.Pos, "region %s cannot leave parallel state %s from %s for %s, in region %s, by this rule yet: fsmgen writes a rule of a region of a parallel state inside a region's state that leaves it for a state of that region as a row on an event, or a timer that does not also leave %s; write the rule from %s, which leaves every region", r.root.Name.Value, r.par.Name.Value, t.From[0].Value, to.Value, o.root.Name.Value, r.top.Name.Value, r.par.Name.Value)
		case r.host != nil && o != nil:
			diags.Errorf(to.Pos, "region %s cannot leave parallel state %s from %s for %s, in region %s, yet: fsmgen writes a row of a region of a parallel state inside a region's state that leaves it only for a state of that region (%s), or a target outside %s, every branch alike; write the row from %s, which leaves every region", r.root.Name.Value, r.par.Name.Value, t.From[0].Value, to.Value, o.root.Name.Value, r.host.root.Name.Value, r.top.Name.Value, r.par.Name.Value)
		default:
			diags.Errorf(to.Pos, "region %s cannot leave parallel state %s from %s by this rule yet: fsmgen writes a rule that leaves a parallel state from inside a region's state as a row on an event, or a timer whose branches all leave it alike; write the row from %s, which leaves every region", r.root.Name.Value, r.par.Name.Value, t.From[0].Value, r.par.Name.Value)
		}
	}
}

// leafParallels returns a copy of the states with every parallel state a
// leaf.
func leafParallels(list []spec.State) []spec.State {
	out := make([]spec.State, len(list))
	for i, s := range list {
		if s.Parallel.Value {
			s.States, s.StatesPos = nil, diag.Pos{}
		} else if s.States != nil {
			s.States = leafParallels(s.States)
		}
		out[i] = s
	}
	return out
}

// nowhere returns the warnings of region r's build that a rule of a
// state of the region (or of a parallel state nested as a region around
// it, whose lists r holds) applies to no state. The build's other
// warnings are not the machine's: it declares every event, action and
// guard of the machine, and its "*" row, which leaves to the parallel
// state what the region does not take, is fsmgen's own.
func nowhere(r *specRegion, ds diag.List) diag.List {
	var out diag.List
	for _, d := range ds.Warnings() {
		if d.Rule != "rule-applies-nowhere" || strings.HasPrefix(d.Msg, `the "*" row`) {
			continue
		}
		if i, e := r.listedBy(d.Pos); i >= 0 {
			g := r.groups[i].Name.Value
			d.Msg = fmt.Sprintf("the rule of %s for %s applies to no state: region %s, a region of %s, takes %s in every state, so %s never reaches %s; remove the rule", g, e.Value, r.root.Name.Value, g, e.Value, e.Value, g)
		}
		out = append(out, d)
	}
	return out
}

// regionSpec returns the spec of region r's build: the region its only
// top-level state, initial, with the rows of its states, and one "*" row
// that leaves every event the region has no rule for to the parallel
// state; lifts changes the parallel states inside it (see
// parnestlift.go).
func regionSpec(f *spec.File, r *specRegion, rows []spec.Transition, lifts *lifts) *spec.File {
	sub := *f
	root := *r.root
	// The lists of the parallel states nested as regions around it (see
	// groupLists).
	root.Ignore = slices.Concat(root.Ignore, r.lists[0])
	root.Reject = slices.Concat(root.Reject, r.lists[1])
	root.Defer = slices.Concat(root.Defer, r.lists[2])
	root.After = slices.Concat(root.After, r.after)
	root.Initial = spec.Bool{Value: true, Pos: r.root.Name.Pos, Set: true}
	// A parallel state inside the region is a leaf of its build, as the
	// machine's build holds a parallel state (see parinreg.go).
	root.States = lifts.apply(leafParallels(root.States))
	standInDones(root.States, r.dones)
	// The states inside the region have the fields of the parallel state
	// (its own and its ancestors'): its region's rules read and set them.
	root.Fields = parallelFields(f.States, r.par)
	sub.States = []spec.State{root}
	sub.Transitions = rows
	sub.Output, sub.Behavior, sub.Breaks = spec.Output{}, spec.String{}, nil
	star := spec.Transition{Pos: r.root.Name.Pos, From: []spec.String{{Value: "*", Pos: r.root.Name.Pos, Set: true}}, OnPos: r.root.Name.Pos}
	for _, e := range f.Events {
		star.On = append(star.On, e.Name)
	}
	star.Ignore = spec.Bool{Value: true, Pos: r.root.Name.Pos, Set: true}
	if len(star.On) > 0 {
		sub.Transitions = append(sub.Transitions, star)
	}
	return &sub
}
