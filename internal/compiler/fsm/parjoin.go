package fsm

import "github.com/fsmgen/fsmgen/internal/compiler/diag"

// join puts the regions' builds into machine m: each region's leaves get
// kinds after m's leaves, its rules indices after m's rules, and its
// rules the machine's events, actions and guards.
func join(m *Machine, regions []*specRegion, hook *parHook, diags *diag.List) {
	leaf, rule := len(m.States), len(m.Rules)
	outer := map[string]*State{}
	for _, s := range m.States {
		outer[s.Name] = s
	}
	for _, s := range m.Composites {
		outer[s.Name] = s
	}
	inRegion := map[string]*State{}
	made := map[*specRegion]*Region{}
	var passing []*Rule
	for i, sr := range regions {
		sub := sr.build
		p := outer[sr.top.Name.Value]
		root := sub.Initial.Path()[0]
		reg := &Region{Index: i, Parallel: p, Place: sr.place, Root: root, Start: sub.Start, Initial: sub.Initial, Field: root.GoName, JSON: root.Snake}
		made[sr] = reg
		if sr.host != nil {
			// A region of a parallel state inside region host, a leaf of
			// host's build made before (see parinreg.go).
			reg.Host, reg.Within = made[sr.host], inRegion[sr.par.Name.Value]
		}
		parent := p
		for _, sg := range sr.groups {
			// The parallel states nested in p that hold the region,
			// outermost first: each lists it among its regions.
			g := groupState(sg, parent, outer, inRegion, diags)
			g.Regions = append(g.Regions, reg)
			reg.Groups = append(reg.Groups, g)
			parent = g
		}
		if len(reg.Groups) > 0 {
			reg.Group = reg.Groups[len(reg.Groups)-1]
		}
		for _, s := range append(append([]*State{}, sub.Composites...), sub.States...) {
			if o := outer[s.Name]; o != nil {
				diags.Errorf(s.Pos, "state %s is declared twice (also at %s): state names are unique across the whole machine", s.Name, o.Pos)
			}
			if o := inRegion[s.Name]; o != nil {
				diags.Errorf(s.Pos, "state %s is declared twice (also at %s): state names are unique across the whole machine", s.Name, o.Pos)
			}
			inRegion[s.Name] = s
			s.Region = reg
		}
		for _, s := range sub.States {
			for _, list := range [][]*Cell{s.Handles, s.Refuses, s.Inherited} {
				for _, c := range list {
					for ; c != nil; c = c.Fallback {
						c.Event = eventNamed(m, c.Event)
					}
				}
			}
			s.Index = leaf
			leaf++
			for _, run := range s.Enter {
				rejoinRun(m, run)
				rejoinRunData(m, run)
			}
			for _, f := range s.Fields {
				f.Data = dataOf(m, f.Data)
			}
			reg.Leaves = append(reg.Leaves, s)
			if s.Final && s.Parent == root {
				// A final leaf deeper in the region completes its
				// composite state, not the region.
				reg.Finals = append(reg.Finals, s)
			}
		}
		reg.Composites = sub.Composites
		for _, s := range append(append([]*State{}, sub.States...), sub.Composites...) {
			rejoinHooks(m, s)
			if s.Leave != nil {
				rejoinRun(m, s.Leave)
				rejoinRunData(m, s.Leave)
			}
		}
		for _, s := range sub.Histories {
			// The region's histories are remembered in the machine's
			// array, after the machine's own and the regions' before.
			s.Hist = len(m.Histories)
			m.Histories = append(m.Histories, s)
		}
		for _, t := range sub.Timers {
			// The region's timers run in the machine's slots, after the
			// machine's own and the regions' before.
			t.Index = len(m.Timers)
			if i, ok := sr.groupRules[t.Pos]; ok {
				t.Group = reg.Groups[i] // a nested parallel state's timer
			}
			t.Cell.Event = m.TimerFired
			rejoinValues(m, t.DelayArgs)
			rejoinDelayFunc(m, t)
			m.Timers = append(m.Timers, t)
			reg.Timers = append(reg.Timers, t)
		}
		standIns := swapTimers(reg, sub, hook.leftTimers)
		for _, r := range sub.Rules {
			if r.From == nil {
				continue // the "*" row that leaves the event to the parallel state
			}
			if standIns[r] {
				continue // see parleave.go
			}
			if hook.passes[r.Pos] && r.Kind == Ignore {
				// A branch that leaves the parallel state in a row that
				// stays in the region by others: the parallel state's
				// rule takes it (see passRules).
				rejoin(m, r)
				passing = append(passing, r)
				continue
			}
			r.Index = rule
			rule++
			rejoin(m, r)
			if r.Group = ruleGroup(r, reg, sr); r.Group != nil {
				relabel(r)
			}
			reg.Rules = append(reg.Rules, r)
		}
		for _, run := range reg.Start {
			rejoinRun(m, run)
			rejoinRunData(m, run)
		}
		if reg.Within != nil {
			reg.Within.Regions = append(reg.Within.Regions, reg)
			reg.Within.Flat = append(reg.Within.Flat, reg)
		} else {
			p.Regions = append(p.Regions, reg)
		}
		p.Flat = append(p.Flat, reg)
		m.Regions = append(m.Regions, reg)
	}
	for _, sr := range regions {
		for _, fn := range sr.ins {
			t := inRegion[fn.InName]
			var own *Region
			for _, reg := range m.Regions {
				if reg.Root.Name == sr.root.Name.Value {
					own = reg
				}
			}
			switch {
			case t == nil:
				diags.Errorf(fn.Pos, "In(%s) names no state inside a region of parallel state %s: name a state of another of its regions", fn.InName, sr.par.Name.Value)
			case t.Region == nil:
				diags.Errorf(fn.Pos, "In(%s) names parallel state %s, which groups regions of %s and is active whenever they are: name a state of one of its regions", fn.InName, fn.InName, t.Parent.Name)
			case t.Region.Parallel != own.Parallel:
				diags.Errorf(fn.Pos, "In(%s) names a state of parallel state %s, which is not active beside region %s: name a state of another region of %s", fn.InName, t.Region.Parallel.Name, sr.root.Name.Value, sr.par.Name.Value)
			case t.Eventless() && !t.Waits:
				diags.Errorf(fn.Pos, "In(%s) names transient state %s, which region %s leaves in the step that enters it: the region is never there when a guard is tested; name a state its eventless transitions lead to", fn.InName, fn.InName, t.Region.Root.Name)
			case t.Settles() && !t.Rests():
				diags.Errorf(fn.Pos, "In(%s) names a final state whose composite state %s takes its done transition in the step that enters it: region %s is never in %s when a guard is tested; name %s, or the state its done transition leads to", fn.InName, t.Completes.Name, t.Region.Root.Name, fn.InName, t.Completes.Name)
			case t.Region == own:
				diags.Errorf(fn.Pos, "In(%s) names a state of the rule's own region %s: the rule's source already says where it is; name a state of another region", fn.InName, sr.root.Name.Value)
			default:
				fn.In = t
			}
		}
	}
	enterInside(m, hook.entering, inRegion)
	enterInward(m, hook.entering, inRegion)
	regionFieldClash(m, diags)
	leavingRules(m, hook.ins, inRegion, hook.owns, hook.elses)
	liftedSources(m, hook.elses)
	passRules(m, passing)
	besideFields(m, diags)
	ownedIns(m, hook.owned, inRegion, diags)
	liftedGroups(m, regions, made)
	groupCompletions(m)
	overwrites(m, diags)
	enteredOverwrites(m, diags)
	m.memories()
	joinRegionDeferrals(m, regions, diags)
	groupHooks(m, regions, diags)
	if hostedResumes(m, diags) {
		return // the paths would resume what the generated code does not
	}
	if waitRefusals(m, diags) {
		return // see parwaits.go
	}
	if quietRefusals(m, diags) {
		return // see parleaveeventless.go
	}
	if restlessHistory(m, diags) {
		return // the paths would not find the history's variants
	}
	if eventlessIntoHistory(m, diags) {
		return // the paths would miss the guards that follow the history
	}
	if finalLoop(m, diags) {
		return // the paths would resume the history without end
	}
	if eventlessLoops(m, diags) || hostedLoops(m, diags) {
		return // the paths would follow the loop without end (see parloops.go, parhostloops.go)
	}
	m.parallelWays()
	b := &builder{m: m}
	m.parallelPaths(b)
	if p := m.swamped; p != nil {
		// The rules the search did not reach would be reported as
		// never firing: only the reason is.
		diags.Errorf(p.Pos, "the checker gives up on parallel state %s after %d microsteps of eventless rules: the guards of the eventless rules inside its regions (of the states that wait, the transient states, the done transitions) combine into more ways through a step than it can follow one by one; give fewer of its regions' states guarded rows without \"on\", or name the event that moves some of them (a row with \"on\")", p.Name, microstepLimit)
		return
	}
	*diags = append(*diags, b.diags...)
	if p := m.endless; p != nil {
		diags.Errorf(p.Pos, "eventless transitions could loop without an event while their guards hold: the eventless rules and done transitions inside parallel state %s may bring a step back to the regions' states it took them from; the checker cannot tell that their guards never hold together, so name the event that moves one of them (a row with \"on\"), or lead one elsewhere", p.Name)
	}
}

// rejoin points rule r of a region's build at the machine's events,
// actions and guards.
func rejoin(m *Machine, r *Rule) {
	r.Event = eventNamed(m, r.Event)
	if r.Guard != nil && r.Guard.InName == "" {
		for _, g := range m.Guards {
			if g.Name == r.Guard.Name {
				r.Guard = g
				g.Uses = append(g.Uses, r)
			}
		}
	}
	rejoinEffect(m, r)
	rejoinData(m, r)
	rejoinEmits(m, r.Actions)
	for _, run := range r.Exits {
		rejoinRun(m, run)
	}
	for _, run := range r.Entries {
		rejoinRun(m, run)
	}
}

// eventNamed returns m's event of e's name; nil for nil.
func eventNamed(m *Machine, e *Event) *Event {
	if e == nil {
		return nil
	}
	for _, o := range m.Events {
		if o.Name == e.Name {
			return o
		}
	}
	return e
}

func rejoinRun(m *Machine, run *Run) { rejoinEmits(m, run.Actions) }

func rejoinEmits(m *Machine, emits []*Emit) {
	for _, e := range emits {
		for _, a := range m.Actions {
			if a.Name == e.Action.Name {
				e.Action = a
			}
		}
	}
}
