package fsm

import (
	"regexp"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves parallel states (UML 2.5.1 §14.2.3.4.3, orthogonal
// states; SCXML 1.0 §3.4, <parallel>). A parallel state's children are
// its regions, all active while it is. fsmgen builds the machine around a
// parallel state as if the parallel state were a leaf (it has a kind, a
// Go type, its own rules, fields, entry, exit and timers), and each
// region as a machine of its own whose top level is the region: every
// region is resolved on its own, so the code dispatches region by region
// and never holds the product of the regions' states.

// Region is one region of a parallel state.
type Region struct {
	// Index is the region's place in Machine.Regions: the slot of the
	// machine's array of region leaves.
	Index int
	// Parallel is the parallel state, Place the region's place among its
	// regions (document order), Root the region's own state.
	Parallel *State
	Place    int
	Root     *State
	// Leaves are the region's leaves, depth first; their kinds follow the
	// machine's leaves' (Index continues Machine.States'). Composites are
	// the composite states inside the region, the root included when it is
	// one.
	Leaves     []*State
	Composites []*State
	// Rules are the region's rules, numbered after Machine.Rules and the
	// regions before it.
	Rules []*Rule
	// Start are the entries, outermost first, that enter the region when
	// its parallel state is entered, down to Initial.
	Start   []*Run
	Initial *State
	// Finals are the region's final leaves (final: true), in leaf order:
	// the region rests in one once it has done its work. Its parallel
	// state completes when every region is in one of its Finals.
	Finals []*State
	// Timers are the timers of the states inside the region, in document
	// order: the last of Machine.Timers, after the machine's own.
	Timers []*Timer
	// Groups are, for a region of a parallel state nested in Parallel (a
	// region's own state that is itself parallel, at any depth), the
	// nested parallel states that hold it, outermost first, and Group the
	// innermost; nil for a region that is Parallel's own state. A group is
	// active exactly while Parallel is, so its regions are Parallel's (see
	// parnest.go): Group.Regions lists those under it, in document order,
	// and Group.Parent is the parallel state it is a region of.
	Groups []*State
	Group  *State
	// Host is, for a region of a parallel state inside another region
	// below its own state (a state the other region's rules enter and
	// leave), that other region, and Within that parallel state, a leaf of
	// Host's; both nil otherwise. Parallel is then the parallel state of
	// the machine that holds Host; the region's slot holds its leaf while
	// Host is in Within, and zero otherwise (see parinreg.go).
	Host   *Region
	Within *State
	// Field is the Go name of the parallel state's struct field that
	// holds the region's state; JSON its member.
	Field, JSON string
}

// Out reports whether cell c of a region's leaf leaves its event to the
// parallel state: the region has no rule for it (a "*" cell of the
// region's own build).
func (c *Cell) Out() bool { return c.State == nil && c.Owner == nil }

// Regional reports whether the machine has parallel states.
func (m *Machine) Regional() bool { return len(m.Regions) > 0 }

// RegionLeaves returns the leaves of every region, in kind order.
func (m *Machine) RegionLeaves() []*State {
	var out []*State
	for _, r := range m.Regions {
		out = append(out, r.Leaves...)
	}
	return out
}

// RegionRules returns the rules of every region, in rule order.
func (m *Machine) RegionRules() []*Rule {
	var out []*Rule
	for _, r := range m.Regions {
		out = append(out, r.Rules...)
	}
	return out
}

// AllRules returns the machine's rules and then its regions'.
func (m *Machine) AllRules() []*Rule { return append(slices.Clone(m.Rules), m.RegionRules()...) }

// Cell returns how leaf s of a region resolves event e: its own cell, or
// the cell it inherits (a composite state's of the region, or Out).
func (s *State) Cell(e *Event) *Cell {
	for _, list := range [][]*Cell{s.Handles, s.Refuses, s.Inherited} {
		for _, c := range list {
			if c.Event == e {
				return c
			}
		}
	}
	return nil
}

// parHook is what a build knows of the parallel states around it: the
// build of the machine, or of one region.
type parHook struct {
	// region is the region a region's build builds; nil in the machine's
	// build.
	region *specRegion
	// covered[p][event] is set when every leaf of every region of
	// parallel state p resolves the event inside its region: p needs no
	// rule of its own for it.
	covered map[string]map[string]bool
	// retests are, by name, the parallel states after every step that
	// keeps the machine in them eventless rules are tested (a state that
	// waits in their regions, or their own eventless rows): an ignore
	// there is a step that may move the machine (see retesting).
	retests map[string]bool
	// reaches[p][event] says, for an event the regions of parallel state
	// p leave to it, in which of their states it reaches p ("region
	// Transfer is in Sent and region Check in Hashing or Hashed"), for the
	// error that p does not handle it.
	reaches map[string]map[string]string
	// used are the events, actions and guards the regions use, which the
	// machine's build must not report as unused.
	used map[string]bool
	// ins are the In(State) guards a region's build made, resolved once
	// every region is built.
	ins []*Func
	// owned are the In(State) guards of the rules of the machine's build
	// other than those that leave a parallel state from inside a region:
	// rules of a parallel state, or of a state around one, testing a
	// state of its regions (see parinown.go).
	owned []*Func
	// shape are the lines the regions add to the machine's shape: each
	// leaf of each region, which a saved machine may name.
	shape []string
	// timers are the timers of the states inside regions, in document
	// order, which the machine around them declares TimerFired and its
	// actions for.
	timers []*Timer
	// regionRule[p][event] names a state of a region of parallel state p
	// with a rule for the event (see regionRules), for deferrals.
	regionRule map[string]map[string]string
	// examples are where the regions' builds found examples, which the
	// machine's build runs through the behaviour it makes.
	examples []diag.Pos
	// regionDefers is set when a state inside a region defers an event:
	// the machine has a queue of deferred events.
	regionDefers bool
	// stuck are the states of the regions of the parallel states from
	// which their region never ends, region by region (see parstuck.go).
	stuck []stuckLeaf
	// leaving names, by the position of its In(State) guard, the sources
	// of each rule of a state inside a region that leaves its parallel
	// state, which the machine's build holds as the parallel state's (see
	// parleave.go): several for a guarded row from several states.
	leaving map[diag.Pos][]string
	// owns and elses are the positions of the parallel state's own else
	// branch after those rules, and of the else branches of their guards.
	owns, elses map[diag.Pos]bool
	// passes are the positions of the branches that leave the parallel
	// state of rows that stay in their region by others (see mixed).
	passes map[diag.Pos]bool
	// leaveTimers are the timers of the states inside regions whose rules
	// leave their parallel state, and leftTimers the timers the machine's
	// build resolves their rules for (see parleave.go).
	leaveTimers []leaveTimer
	leftTimers  []*Timer
	// quiet are the eventless rows of transient states inside regions
	// that leave their parallel state, and quietCells the cells the
	// machine's build resolves for them (see parleaveeventless.go).
	quiet      []leaveRow
	quietCells []*Cell
	// sources[p][event] are the states inside the regions of parallel
	// state p whose rules for the event leave p (see parleave.go).
	sources map[string]map[string][]string
	// groupDones[p] are the parallel states nested as regions of
	// parallel state p that have a done transition, in document order
	// (see parnestdone.go).
	groupDones map[string][]*spec.State
	// entering are the rules from outside the parallel states into states
	// inside their regions (see parenter.go).
	entering *entering
}

// timed reports whether some state inside a region has a timer.
func (h *parHook) timed() bool { return h != nil && len(h.timers) > 0 }

// timerPos is where the first timer inside a region is declared.
func (h *parHook) timerPos() diag.Pos {
	if !h.timed() {
		return diag.Pos{}
	}
	return h.timers[0].Pos
}

// covers reports whether leaf s needs no rule for e: it is a parallel
// state whose regions resolve e in every state.
func (h *parHook) covers(s *State, e *Event) bool {
	return h != nil && h.covered[s.Name][e.Name]
}

// reaching says in which states of its regions event e reaches parallel
// state s, or "" when s is not one.
func (h *parHook) reaching(s *State, e string) string {
	if h == nil {
		return ""
	}
	return h.reaches[s.Name][e]
}

// inRegion reports whether the build is a region's.
func (h *parHook) inRegion() bool { return h != nil && h.region != nil }

// uses reports whether a region uses a declaration: "event E", "action
// A", "guard G".
func (h *parHook) uses(what string) bool { return h != nil && h.used[what] }

// shapeLines returns the lines the regions add to the machine's shape.
func (h *parHook) shapeLines() []string {
	if h == nil {
		return nil
	}
	return h.shape
}

// specRegion is a region as the spec writes it.
type specRegion struct {
	par *spec.State
	// top is the parallel state of the machine around the regions that
	// holds the region: par, or for a region of a parallel state inside
	// another's region (host), the outermost one.
	top *spec.State
	// host is, for a region of a parallel state that a rule of another
	// region enters and leaves, that region; nil otherwise (see
	// parinreg.go).
	host *specRegion
	// groups are the parallel states nested in par that hold the region,
	// outermost first (see groupOf); nil for a region that is par's own
	// state.
	groups []*spec.State
	place  int
	root   *spec.State
	// names are the names of the states inside the region, the root
	// included.
	names map[string]bool
	// finals are the names of the region's final states: leaves right
	// inside the region's own state.
	finals map[string]bool
	// stuck are the states its build found the region never ends from
	// (see parstuck.go).
	stuck []stuckLeaf
	// left are the parallel states inside the region that a rule or
	// timer of the region other than their done transition leaves (see
	// parstuck.go).
	left map[string]bool
	// transient is where a state inside the region is transient, done
	// where a composite state inside it has a done transition (zero when
	// none is): a region that holds a parallel state refuses both (see
	// parinreg.go).
	transient, done diag.Pos
	// timers are the rules of the timers of the states inside the
	// region, as rows, for the checks of a region's rows.
	timers []spec.Transition
	build  *Machine
	// ins are the In(State) guards of the region's rules.
	ins []*Func
	// resumed is set when a deep history may resume the region's leaves:
	// its build resolves the entries of each (State.Enter).
	resumed bool
	// entered are the states inside the region that rules from outside
	// its parallel state target (see parenter.go): its build reaches
	// them, and resolves the entries of each leaf (State.Enter).
	entered []string
	// lists are the entries of the ignore, reject and defer lists of the
	// parallel states nested as regions that hold the region (groups)
	// that the region's own state holds too (see groupLists).
	lists [3][]spec.String
	// groupRules are the positions of the rows, and their branches, of
	// the parallel states nested as regions that the region's own state
	// holds (see groupRule), each with its parallel state's index in
	// groups.
	groupRules map[diag.Pos]int
	// after are the timers of the parallel states nested as regions that
	// hold the region that its own state runs (see groupTimers).
	after []*spec.After
	// lifted are the positions of the rows and timers, and their
	// branches, of the parallel states nested as regions, the first of
	// which is this region, that their parallel state holds (see
	// parnestlift.go), each with its parallel state's index in groups.
	lifted map[diag.Pos]int
	// dones are, by name, the done transitions of the composite states
	// inside the region that leave the parallel state, each branch that
	// leaves a stand-in (see parleavedone.go): the region's build takes
	// these instead of the spec's.
	dones map[string]*spec.Done
}

// inRE matches the built-in guard In(State).
var inRE = regexp.MustCompile(`^In\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$`)

// inGuard returns the built-in guard In(State) that s names, or nil when
// s names another guard.
func (h *parHook) inGuard(b *builder, s spec.String) *Func {
	mt := inRE.FindStringSubmatch(s.Value)
	if mt == nil {
		return nil
	}
	fn := &Func{Name: s.Value, Kind: Guard, Pos: s.Pos, InName: mt[1]}
	if h != nil && slices.Contains(h.leaving[s.Pos], mt[1]) {
		// (In a region's build, the guard of a row of a parallel state
		// inside a region's state that leaves it, see parhostedlift.go.)
		fn.source = true
		h.ins = append(h.ins, fn)
		return fn
	}
	if h == nil {
		b.errorf(s.Pos, "In(%s) tests the state of a region of a parallel state, and the machine has none: name a state inside a region, or use a guard of your own", mt[1])
		return fn
	}
	if h.region == nil {
		// A guard of a rule of a parallel state, or of a state around
		// one, resolved once the regions are joined (see parinown.go).
		h.owned = append(h.owned, fn)
		return fn
	}
	h.ins = append(h.ins, fn)
	return fn
}

// hasParallel reports whether a list of states holds a parallel state.
func hasParallel(list []spec.State) bool {
	for i := range list {
		if list[i].Parallel.Value || hasParallel(list[i].States) {
			return true
		}
	}
	return false
}

// deepOf returns s when it has a deep history, else deep: the innermost
// composite state with a deep history around the states inside s.
func deepOf(s, deep *spec.State) *spec.State {
	if s.History.Value == "deep" {
		return s
	}
	return deep
}

// regionsOf returns the regions of the parallel states in list, in
// document order, checking what a parallel state and its regions may be.
func regionsOf(list []spec.State, diags *diag.List, host *specRegion, deep *spec.State) []*specRegion {
	var out []*specRegion
	for i := range list {
		s := &list[i]
		if !s.Parallel.Value {
			out = append(out, regionsOf(s.States, diags, host, deepOf(s, deep))...)
			continue
		}
		switch {
		case host != nil:
			// A parallel state a rule of region host enters and leaves
			// (see parinreg.go).
			out = append(out, hostedRegions(host, s, deep, diags)...)
			continue
		case len(s.States) < 2:
			tooFewRegions(s, diags)
			continue
		}
		// A deep history around the parallel state, or its own, remembers
		// the leaf of each region (SCXML 1.0 §3.10, §3.13): its regions
		// may be resumed.
		resumed := deepHistoryOf(s, deep, diags)
		nested := nestedRegions(s, s, nil, diags)
		for place, nr := range nested {
			r := &specRegion{par: s, top: s, groups: nr.groups, place: place, root: nr.root, names: map[string]bool{}, finals: map[string]bool{}, resumed: resumed}
			checkRegion(r, r.root, nil, diags)
			if s.Done != nil && len(r.finals) == 0 {
				// SCXML 1.0 §3.4: done.state.ID of a <parallel> is raised
				// once every child region is in a final state.
				diags.Errorf(r.root.Name.Pos, "region %s of parallel state %s has no final state, so %s's done transition can never be taken: mark the state the region ends in \"final: true\"", r.root.Name.Value, s.Name.Value, s.Name.Value)
			}
			out = append(out, r)
			out = append(out, regionsOf(r.root.States, diags, r, deepOf(r.root, nil))...)
		}
	}
	return out
}

// checkRegion checks a state inside a region, whose parent is parent (nil
// for the region's own state), and records its name.
func checkRegion(r *specRegion, s, parent *spec.State, diags *diag.List) {
	r.names[s.Name.Value] = true
	if s != r.root && s.Parallel.Value {
		// A parallel state inside the region: a leaf of the region's
		// build, whose regions are checked as regions of their own.
		checkHosting(r, s, diags)
		return
	}
	what := s.Name.Value + " (in region " + r.root.Name.Value + " of parallel state " + r.par.Name.Value + ")"
	if s == r.root && s.Done != nil {
		// SCXML 1.0 §3.13: a transition of the region's own state that
		// targets a state inside it has the parallel state as its domain,
		// and would leave every region.
		diags.Errorf(s.Done.Pos, "region %s of parallel state %s has a done transition: the region is done once it is in its final state, and a transition of the region's own state would leave the whole parallel state (SCXML 1.0 §3.13); put done on a composite state inside the region, or on %s, which completes once every region is in a final state", s.Name.Value, r.par.Name.Value, r.par.Name.Value)
	}
	switch {
	case s == r.root && s.Initial.Set:
		diags.Errorf(s.Initial.Pos, "region %s of parallel state %s is marked initial: the regions of a parallel state are all entered with it; remove initial", s.Name.Value, r.par.Name.Value)
	case s.Terminal.Value:
		diags.Errorf(s.Terminal.Pos, "region state %s is terminal: a region's state is left with its parallel state; leave the parallel state for a terminal state instead", what)
	case s == r.root && s.Final.Value:
		diags.Errorf(s.Final.Pos, "region %s of parallel state %s is final: a region ends in a final state inside it (SCXML 1.0 §3.4); mark the leaf it ends in \"final: true\"", s.Name.Value, r.par.Name.Value)
	case s.Final.Value && parent == r.root && len(s.States) == 0 && (len(s.Ignore) > 0 || len(s.Reject) > 0 || len(s.Defer) > 0 || len(s.After) > 0):
		diags.Errorf(s.Name.Pos, "region state %s is final: a final state has no transitions of its own (SCXML 1.0 §3.7), so it ignores, rejects, defers and times nothing; the events it is offered go to the states around it, as from any leaf of the region", what)
	case len(s.Fields) > 0:
		diags.Errorf(s.Fields[0].Name.Pos, "region state %s has fields: the states inside regions have no fields yet; give the fields to the parallel state", what)
	}
	if s.Transient.Value && r.transient.Line == 0 {
		r.transient = s.Transient.Pos
	}
	if s.Done != nil && s != r.root {
		if r.done.Line == 0 {
			r.done = s.Done.Pos
		}
	}
	for _, a := range s.After {
		// A region's timer runs from its state's entry to its exit, as a
		// flat machine's, and fires its rules in the region alone.
		if s.Final.Value && parent == r.root && len(s.States) == 0 {
			continue // a region's final state has no timer (reported above)
		}
		// Its rules are checked as the region's rows are (splitRows).
		r.timers = append(r.timers, spec.Transition{Pos: a.Pos, From: []spec.String{s.Name}, Outcome: a.Outcome, Guards: a.Guards})
	}
	if s.Final.Value && parent == r.root && len(s.States) == 0 {
		r.finals[s.Name.Value] = true
	}
	for i := range s.States {
		checkRegion(r, &s.States[i], s, diags)
	}
}

// Settles reports whether leaf s of a region is one the region never
// rests in, but leaves by its eventless rules in the step that enters it,
// as a flat machine does: a final state whose composite state has a done
// transition (SCXML 1.0 §3.7.1, done.state.ID), or a transient state
// (SCXML 1.0 §3.13, eventless transitions; see Eventless).
//
// A state that waits (State.Waits) is none: the region rests there.
func (s *State) Settles() bool { return s.Region != nil && s.Choice != nil && !s.Waits }

// Eventless reports whether leaf s of a region is a transient state the
// spec declares (not a final state a done transition leaves), or a state
// that waits: the eventless rules of every region in such a state are
// taken together, as one microstep (SCXML 1.0 §3.13,
// selectEventlessTransitions), a state that waits staying where no guard
// holds.
func (s *State) Eventless() bool {
	return s != nil && s.Region != nil && s.Choice != nil && s.Completes == nil
}

// WaitsIn reports whether some region of parallel state p has a state
// that waits on eventless rules (State.Waits): after every step that
// leaves the machine in p, the eventless rules of the regions are tested
// (SCXML 1.0 §3.13), not only after the steps that enter transient
// states.
func (p *State) WaitsIn() bool {
	return slices.ContainsFunc(p.Flat, func(reg *Region) bool { return slices.ContainsFunc(reg.Leaves, func(s *State) bool { return s.Waits }) })
}

// Awaits reports whether a step that keeps the machine in parallel state
// p ends by testing eventless rules: those of the states that wait in its
// regions (WaitsIn), then p's own (Waits), which SCXML 1.0 §3.13 selects
// only for an atomic state none of whose nearer ancestors has one enabled
// (selectEventlessTransitions), and whose conflict with a region's rule
// the region's rule wins (removeConflictingTransitions).
func (p *State) Awaits() bool { return p.Regions != nil && (p.Waits || p.WaitsIn()) }

// Ends reports whether entering leaf s of a region may end the region in
// the same step: s is one of the region's final leaves, or it settles and
// its eventless rules (the done transition that leaves it) may lead to
// one, or resume one through a history.
//
// It answers for the regions of a parallel state outside regions only,
// and false for those of a parallel state inside a region, whose done
// transition is a rule of its host region that the regions' steps test
// on their own (fsm's parinregpaths.go and hostorder.go, emit's
// hostdone.go and hostorder.go).
func (s *State) Ends() bool {
	if s.Region == nil || s.Region.Within != nil {
		return false
	}
	if slices.Contains(s.Region.Finals, s) {
		return true
	}
	if !s.Settles() {
		return false
	}
	for _, r := range s.Choice.Rules {
		// The build refuses eventless rules that could loop. A rule into
		// a history may resume a final leaf (its variants).
		for _, v := range append([]*Rule{r}, r.Variants...) {
			if v.To != nil && v.To != s && v.To.Ends() {
				return true
			}
		}
	}
	return false
}

// parallel reports whether s is a parallel state of the machine around
// the regions: entering and leaving it enters and leaves its regions,
// whether or not it has an entry or exit of its own.
// In a region's build, it is a parallel state inside the region, a leaf
// there (see parinreg.go).
func (b *builder) parallel(s *State) bool {
	return b.par != nil && b.specOf[s] != nil && b.specOf[s].Parallel.Value
}

// unreachableFinal reports final state s of a region's build, which no
// rule of the region leads to from the region's initial state: the region
// can never end, nor its parallel state complete.
func (b *builder) unreachableFinal(s *State) {
	r := b.par.region
	so := ""
	if r.par.Done != nil {
		so = ", so the done transition of " + r.par.Name.Value + " can never be taken"
	}
	b.errorf(s.Pos, "region %s can never reach its final state %s: no rule of the region leads there from its initial state %s%s; add a transition to %s", r.root.Name.Value, s.Name, b.m.Initial.Name, so, s.Name)
}

// tooFewRegions reports parallel state s, which has fewer than two
// regions (its states).
func tooFewRegions(s *spec.State, diags *diag.List) {
	has := "no region"
	if len(s.States) == 1 {
		has = "only one region"
	}
	diags.Errorf(s.Parallel.Pos, "parallel state %s has %s: a parallel state needs at least two (its states), each active at once; a single region is an ordinary composite state", s.Name.Value, has)
}
