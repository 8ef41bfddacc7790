package diff

import (
	"fmt"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// regions compares the parallel states matched across the revisions (see
// docs/spec.md, "Parallel states"): a machine saved in a parallel state
// names the state of each of its regions, so a region added or removed,
// a state of a region removed, or a state made parallel, breaks the
// machines saved in it.
func (d *differ) regions() {
	old := map[string]*fsm.State{}
	for _, s := range d.old.States {
		old[d.rename("state", s.Name)] = s
	}
	for _, s := range d.old.Composites {
		old[d.rename("state", s.Name)] = s
	}
	for _, ns := range d.new.States {
		os := old[ns.Name]
		if os == nil || os.Transient || ns.Regions == nil && os.Regions == nil {
			continue
		}
		if os.Composite() {
			c := &Change{Subject: "state " + ns.Name, What: "made parallel", Old: os.Pos, New: ns.Pos}
			c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in a state inside %s no longer loads: the states inside a parallel state are saved as its regions' (declare the break)", os.Name))
			c.verdict(Behaviour, Breaks, fmt.Sprintf("%s's states are now all active at once, each region's", ns.Name))
			d.add(c)
			continue
		}
		// The regions of the parallel states inside its regions too (see
		// parinreg.go): a machine saved in it names their states while
		// their host region is in them.
		oldRegs := map[string]*fsm.Region{}
		for _, r := range os.Flat {
			oldRegs[d.rename("state", r.Root.Name)] = r
		}
		newRegs := map[string]bool{}
		for _, r := range ns.Flat {
			newRegs[r.Root.Name] = true
			o := oldRegs[r.Root.Name]
			if o == nil {
				c := &Change{Subject: "state " + ns.Name, What: "gained region " + r.Root.Name, Old: os.Pos, New: ns.Pos}
				saved := os.Name
				if r.Host != nil {
					saved = fmt.Sprintf("%s with region %s in %s", os.Name, r.Host.Root.Name, r.Within.Name)
				}
				c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s names no state of region %s, and no longer loads (declare the break)", saved, r.Root.Name))
				d.resumedFresh(c, ns, r)
				d.add(c)
				continue
			}
			if o.Root.Name != r.Root.Name {
				c := &Change{Subject: "state " + r.Root.Name, What: "renamed from " + o.Root.Name, Old: o.Root.Pos, New: r.Root.Pos}
				c.verdict(SavedStates, OK, fmt.Sprintf("a machine saved in %s names region %s under %q, and loads with it as region %s", os.Name, o.Root.Name, o.JSON, r.Root.Name))
				if o.JSON != r.JSON {
					c.verdict(Code, Review, fmt.Sprintf("the field %s of %s is now %s: code that names it no longer compiles until it is updated", o.Root.GoName, ns.GoName, r.Root.GoName))
				}
				d.add(c)
			}
			d.regionLeaves(ns, o, r)
			d.regionFinals(os, ns, o, r)
			d.regionHistories(o, r)
		}
		for _, r := range os.Flat {
			if !newRegs[d.rename("state", r.Root.Name)] {
				c := &Change{Subject: "state " + ns.Name, What: "lost region " + r.Root.Name, Old: os.Pos, New: ns.Pos}
				c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s names a state of region %s, which it no longer has, and no longer loads (declare the break)", os.Name, r.Root.Name))
				d.add(c)
			}
		}
		d.restsFinal(os, ns)
		d.doneGained(os, ns, ns.Name+" with every region")
		if os.Completion != nil && ns.Completion != nil {
			d.finalMemories(os, ns)
		}
		for _, ng := range ns.Nested() {
			og := d.nestedOf(os, ng)
			if og != nil {
				d.restsFinal(og, ng)
			}
			if ng.Completion != nil && !ng.RestsFinal() && og != nil && og.Completion == nil {
				c := &Change{Subject: "state " + ng.Name, What: "gained a done transition", Old: og.Pos, New: ng.Pos}
				c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s with every region of %s in a final state no longer loads: %s now takes its done transition there, which leaves %s, and never rests so (declare the break if no saved machine is so)", ns.Name, ng.Name, ng.Name, ns.Name))
				d.add(c)
			}
		}
	}
}

// doneGained says what a done transition that parallel state ns gained
// without a way to refuse does to the machines saved in it with every
// region final (saved says where: "P with every region", or for a
// parallel state inside a region "P with region R in Q and every region
// of Q"); what the done transition does is compared as a rule (see
// rules), and one whose guards may all fail leaves them resting (see
// restsFinal).
func (d *differ) doneGained(os, ns *fsm.State, saved string) {
	if os.Completion != nil || ns.Completion == nil || ns.RestsFinal() {
		return
	}
	c := &Change{Subject: "state " + ns.Name, What: "gained a done transition", Old: os.Pos, New: ns.Pos}
	also := ""
	if slices.ContainsFunc(d.new.Memories, func(mem *fsm.Memory) bool {
		return mem.Region.Owner() == ns && !d.new.RemembersFinal(mem.History, ns)
	}) {
		// A deep history around it remembers its regions' leaves, never
		// every one final (the done stays inside it).
		also = ", nor one whose deep history remembers every region of " + ns.Name + " final"
	}
	c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s in a final state no longer loads%s: %s now takes its done transition there, and never rests so (declare the break if no saved machine is so)", saved, also, ns.Name))
	d.add(c)
}

// restsFinal compares whether the machine may rest with every region of
// parallel state ns final (see fsm.State.RestsFinal): a done transition
// that gains a way to refuse (it loses its else, or is added with guards
// and no else) breaks no saved machine; one that loses it (gains its
// else) breaks those saved with every region final.
func (d *differ) restsFinal(os, ns *fsm.State) {
	switch {
	case os.Completion != nil && !os.RestsFinal() && ns.RestsFinal():
		c := &Change{Subject: "state " + ns.Name, What: "may rest with every region final now: its done transition may be refused by every guard", Old: os.Pos, New: ns.Pos}
		c.verdict(SavedStates, OK, fmt.Sprintf("no machine saved by the old revision is in %s with every region final, and every one loads; a machine now rests so when no guard of the done transition holds, and the old revision cannot load it", os.Name))
		d.add(c)
	case os.Completion == nil && ns.RestsFinal():
		c := &Change{Subject: "state " + ns.Name, What: "gained a done transition that every guard may refuse", Old: os.Pos, New: ns.Pos}
		c.verdict(SavedStates, OK, fmt.Sprintf("a machine saved in %s with every region final loads, and rests so until an event moves it: the done event was raised as it entered the last final state", ns.Name))
		d.add(c)
	case os.RestsFinal() && ns.Completion != nil && !ns.RestsFinal():
		c := &Change{Subject: "state " + ns.Name, What: "no longer rests with every region final: its done transition now has an else", Old: os.Pos, New: ns.Pos}
		c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s with every region final (where no guard of the done transition held) no longer loads: %s now takes its done transition there, and never rests so (declare the break if no saved machine is so)", os.Name, ns.Name))
		d.add(c)
	}
}

// resumedFresh says what gained region r of parallel state ns does to the
// machines saved elsewhere while a deep history holding ns remembers its
// regions: their memory names no leaf of r, and Load leaves it zero, so
// resuming the history enters r through its initial state.
func (d *differ) resumedFresh(c *Change, ns *fsm.State, r *fsm.Region) {
	q := r.Owner() // ns, or a parallel state inside one of its regions
	for _, h := range d.new.Histories {
		if h.History == fsm.HistoryDeep && h.Contains(q) {
			c.verdict(Behaviour, Review, fmt.Sprintf("a machine saved while the deep history of %s remembered %s's regions resumes region %s in its initial state %s", h.Name, q.Name, r.Root.Name, r.Initial.Name))
			return
		}
	}
}

// finalMemories compares what the deep histories holding parallel state
// ns, matched across the revisions, may remember of its regions: one
// that remembered every region final (the done transition left its
// state) and no longer may (it now stays inside) breaks the machines
// saved so, whose memory Load then refuses.
func (d *differ) finalMemories(os, ns *fsm.State) {
	for _, h := range d.new.Histories {
		if !h.Contains(ns) || h.History != fsm.HistoryDeep || d.new.RemembersFinal(h, ns) {
			continue
		}
		for _, oh := range d.old.Histories {
			if d.rename("state", oh.Name) != h.Name || !d.old.RemembersFinal(oh, os) {
				continue
			}
			c := &Change{Subject: "state " + ns.Name, What: "done transition no longer leaves " + h.Name, Old: os.Pos, New: ns.Pos}
			c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved after the done transition of %s left %s remembers every region of %s final, which the deep history of %s no longer keeps, and no longer loads (declare the break if no saved machine is so)", os.Name, oh.Name, ns.Name, h.Name))
			d.add(c)
		}
	}
}

// regionLeaves compares the leaves of a region matched across the
// revisions: one removed breaks the machines saved in it.
func (d *differ) regionLeaves(p *fsm.State, o, n *fsm.Region) {
	has := map[string]bool{}
	for _, s := range n.Leaves {
		has[s.Name] = true
	}
	for _, s := range o.Leaves {
		if !has[d.rename("state", s.Name)] {
			c := &Change{Subject: "state " + s.Name, What: fmt.Sprintf("removed from region %s of %s", n.Root.Name, p.Name), Old: s.Pos}
			c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s with region %s in %s no longer loads (declare the break)", p.Name, n.Root.Name, s.Name))
			d.add(c)
		}
	}
	for _, s := range n.Leaves {
		if !containsLeaf(o.Leaves, s.Name, d) {
			d.add(&Change{Subject: "state " + s.Name, What: fmt.Sprintf("added to region %s of %s", n.Root.Name, p.Name), New: s.Pos})
		}
	}
	// A saved machine names the running timers of its regions' leaves,
	// as a flat machine's of its leaf.
	for _, os := range o.Leaves {
		for _, ns := range n.Leaves {
			if d.rename("state", os.Name) != ns.Name {
				continue
			}
			if os.Name != ns.Name {
				c := &Change{Subject: "state " + ns.Name, What: "renamed from " + os.Name, Old: os.Pos, New: ns.Pos}
				c.verdict(SavedStates, OK, fmt.Sprintf("a machine saved in %s with region %s in %s loads with it in %s", p.Name, n.Root.Name, os.Name, ns.Name))
				if os.GoName != ns.GoName {
					c.verdict(Code, Review, fmt.Sprintf("the kind constant %s is now %s: code that names it no longer compiles until it is updated", os.KindName, ns.KindName))
				}
				d.add(c)
			}
			d.timers(os, ns, fmt.Sprintf("%s with region %s in %s", p.Name, n.Root.Name, os.Name))
			if os.Regions != nil && ns.Regions != nil {
				// A parallel state inside the region, which may rest
				// with every region final as p may.
				d.restsFinal(os, ns)
				d.doneGained(os, ns, fmt.Sprintf("%s with region %s in %s and every region of %s", p.Name, n.Root.Name, os.Name, os.Name))
			}
			if !os.Settles() && ns.Eventless() && !ns.Waits {
				// What its choice does is compared as a rule; what it
				// does to saved machines is here.
				c := &Change{Subject: "state " + ns.Name, What: "made transient", Old: os.Pos, New: ns.Pos}
				c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s with region %s in %s no longer loads: the region never rests there (declare the break if no saved machine is so)", p.Name, n.Root.Name, os.Name))
				d.add(c)
			} else if os.Rests() && ns.Settles() && !ns.Rests() {
				// A done transition that gained its else.
				c := &Change{Subject: "state " + ns.Name, What: fmt.Sprintf("left at once: the done transition of %s now has an else", ns.Completes.Name), Old: os.Pos, New: ns.Pos}
				why := fmt.Sprintf("a machine saved in %s with region %s in %s (where no guard of the done transition of %s held) no longer loads: the region never rests there now (declare the break if no saved machine is so)", p.Name, n.Root.Name, os.Name, os.Completes.Name)
				if i := slices.IndexFunc(d.old.Memories, func(mem *fsm.Memory) bool { return mem.Region == o }); i >= 0 {
					// A deep history may remember it there too.
					why = fmt.Sprintf("a machine saved in %s with region %s in %s (where no guard of the done transition of %s held), or whose deep history of %s remembers it there, no longer loads: the region never rests there now (declare the break if no saved machine is so)", p.Name, n.Root.Name, os.Name, os.Completes.Name, d.old.Memories[i].History.Name)
				}
				c.verdict(SavedStates, Breaks, why)
				d.add(c)
			} else if os.Settles() && !os.Rests() && ns.Rests() {
				// A done transition that lost its else: nothing was saved
				// with the region in the final state, which it may now
				// rest in.
				c := &Change{Subject: "state " + ns.Name, What: fmt.Sprintf("may rest now: the done transition of %s may be refused by every guard", ns.Completes.Name), Old: os.Pos, New: ns.Pos}
				c.verdict(SavedStates, OK, fmt.Sprintf("no machine saved by the old revision has region %s in %s, and every one loads; region %s now rests in %s when no guard of the done transition of %s holds, and the old revision cannot load it", n.Root.Name, os.Name, n.Root.Name, ns.Name, ns.Completes.Name))
				d.add(c)
			} else if !os.Settles() && ns.Settles() && !ns.Rests() {
				// What the done transition does is compared as a rule
				// (its choice); what it does to saved machines is here.
				c := &Change{Subject: "state " + ns.Name, What: fmt.Sprintf("made final in %s, whose done transition leaves it at once", ns.Completes.Name), Old: os.Pos, New: ns.Pos}
				c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s with region %s in %s no longer loads: the region never rests there (declare the break if no saved machine is so)", p.Name, n.Root.Name, os.Name))
				d.add(c)
			}
		}
	}
}

// regionFinals compares the final states of a region matched across the
// revisions (see docs/spec.md, "Parallel states"): one made final under a
// parallel state with a done transition may now complete it, and a
// machine saved with every region in a final state no longer loads; one
// no longer final completes it no more.
func (d *differ) regionFinals(op, np *fsm.State, o, n *fsm.Region) {
	was := map[string]bool{}
	for _, s := range o.Finals {
		was[d.rename("state", s.Name)] = true
	}
	is := map[string]bool{}
	for _, s := range n.Finals {
		is[s.Name] = true
		if was[s.Name] || !containsLeaf(o.Leaves, s.Name, d) {
			continue
		}
		c := &Change{Subject: "state " + s.Name, What: fmt.Sprintf("made final in region %s of %s", n.Root.Name, np.Name), New: s.Pos}
		if np.Completion != nil && op.Completion != nil {
			if !np.RestsFinal() {
				c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s with every region in a final state, %s included, no longer loads: %s takes its done transition there (declare the break if no saved machine is so)", np.Name, s.Name, np.Name))
			}
			c.verdict(Behaviour, Breaks, fmt.Sprintf("entering %s may now complete %s and take its done transition", s.Name, np.Name))
		}
		d.add(c)
	}
	for _, s := range o.Finals {
		name := d.rename("state", s.Name)
		if is[name] || !containsLeaf(n.Leaves, name, &differ{}) {
			continue
		}
		c := &Change{Subject: "state " + name, What: fmt.Sprintf("no longer final in region %s of %s", n.Root.Name, np.Name), Old: s.Pos}
		if op.Completion != nil && np.Completion != nil {
			c.verdict(Behaviour, Breaks, fmt.Sprintf("entering %s no longer completes %s", name, np.Name))
		}
		d.add(c)
	}
}

// containsLeaf reports whether leaves hold the old state of new name name.
func containsLeaf(leaves []*fsm.State, name string, d *differ) bool {
	for _, s := range leaves {
		if d.rename("state", s.Name) == name {
			return true
		}
	}
	return false
}

// regionStates returns the states inside the regions of m's parallel
// states, whose rules are compared as the machine's are: each region's
// composite states, then its leaves.
func regionStates(m *fsm.Machine) []*fsm.State {
	var out []*fsm.State
	for _, r := range m.Regions {
		out = append(append(out, r.Composites...), r.Leaves...)
	}
	return out
}

// outOfRegion returns cell c of state s, or, when s is inside a region
// that leaves the event to its parallel state, the parallel state's cell.
func outOfRegion(s *fsm.State, c *fsm.Cell) *fsm.Cell {
	if s.Region == nil || !c.Out() {
		return c
	}
	if q := s.Region.Within; q != nil {
		// A region of a parallel state inside another region leaves the
		// event to that parallel state, a leaf of its host region.
		return cellOf(q, c.Event)
	}
	return leavingFor(ownCell(s.Region.Parallel, c.Event), s)
}

// leavingFor returns cell c of a parallel state as leaf s sees it: when
// c holds rules of states inside its regions that leave it (tried before
// its own, each where its region is in its source, see fsm.Rule.Source),
// the rules whose source holds s, in their order, then, when their
// guards may all fail, its own (see fsm.Rule.SourceIn); for a leaf
// outside every source and for the parallel state itself, its own rules
// (nil for none).
func leavingFor(c *fsm.Cell, s *fsm.State) *fsm.Cell {
	if c == nil || !slices.ContainsFunc(c.Rules, func(r *fsm.Rule) bool { return r.Source != nil }) {
		return c
	}
	out := *c
	var from, own []*fsm.Rule
	for _, r := range c.Rules {
		switch {
		case r.Source == nil:
			own = append(own, r)
		case r.Source.Contains(s) && len(from) == 0 || len(from) > 0 && r.Source == from[0].Source:
			o := *r
			o.Guard = r.ShownGuard() // In(source): s is there
			o.SourceIn = nil
			from = append(from, &o)
		}
	}
	switch {
	case len(from) > 0 && from[len(from)-1].Guard == nil:
		out.Rules, out.Fallback = from, nil
	case len(from)+len(own) == 0 && out.Fallback == nil:
		return nil
	default:
		out.Rules = append(from, own...)
	}
	return &out
}

// nestedOf returns the parallel state nested as regions of old parallel
// state os that ng, nested in the new one, was (by name, through
// renamed_from); nil when os had none.
func (d *differ) nestedOf(os, ng *fsm.State) *fsm.State {
	if os == nil {
		return nil
	}
	for _, og := range os.Nested() {
		if d.rename("state", og.Name) == ng.Name {
			return og
		}
	}
	return nil
}
