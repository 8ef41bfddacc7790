package diff

import (
	"fmt"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// deferred reports whether cell c defers its event.
func deferred(c *fsm.Cell) bool {
	return c != nil && len(c.Rules) == 1 && c.Rules[0].Kind == fsm.Defer
}

// deferralChanged adds to c, the change of the rule of pair, what a
// deferral added or removed means for saved machines: a machine saved in
// the state may hold the event it deferred, which loads only while the
// state defers it (Load reads the queue strictly; UML keeps a deferred
// event only while the state configuration defers it).
func deferralChanged(c *Change, pair string, o, n *fsm.Cell) {
	switch was, is := deferred(o), deferred(n); {
	case was && !is:
		c.verdict(SavedStates, Breaks, "a machine saved in the state of "+pair+" may hold the event it deferred, which it no longer defers there: that machine no longer loads (keep the deferral, or declare the break)")
	case !was && is:
		c.verdict(SavedStates, OK, "the machines saved before hold no such event: they load, and defer it from now on")
	}
}

// regionTakeovers reports the leaves of regions that take an event a leaf
// of another region of their parallel state deferred in the old revision,
// which they did not take then: the configurations of both no longer
// defer the event (a transition takes precedence over a deferral), so a
// machine saved in one of them holding the event no longer loads.
func (d *differ) regionTakeovers() {
	if d.old.Deferral == nil {
		return
	}
	oldLeaf := map[string]*fsm.State{}
	for _, s := range regionStates(d.old) {
		oldLeaf[d.rename("state", s.Name)] = s
	}
	oldEvent := map[string]*fsm.Event{}
	for _, e := range d.old.Events {
		oldEvent[d.rename("event", e.Name)] = e
	}
	for _, reg := range d.new.Regions {
		for _, ns := range reg.Leaves {
			os := oldLeaf[ns.Name]
			if os == nil || os.Region == nil {
				continue
			}
			for _, ne := range d.new.Events {
				oe := oldEvent[ne.Name]
				if oe == nil || !ns.RegionTakes(ne) || os.RegionTakes(oe) {
					continue
				}
				if by := deferredBeside(d.old, os, oe); by != nil {
					c := &Change{Subject: "rule " + ns.Name + " × " + ne.Name, What: fmt.Sprintf("now takes %s, which %s defers beside it", ne.Name, by.Name), Old: os.Pos, New: ns.Pos}
					c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s with its regions in %s and %s may hold %s, which that configuration no longer defers: that machine no longer loads (declare the break if none holds one)", os.Region.Parallel.Name, by.Name, os.Name, oe.Name))
					d.add(c)
				}
			}
		}
	}
}

// deferredBeside returns a leaf of another region of s's parallel state
// that defers e in machine m; nil when none does.
func deferredBeside(m *fsm.Machine, s *fsm.State, e *fsm.Event) *fsm.State {
	for _, reg := range s.Region.Parallel.Regions {
		if reg == s.Region {
			continue
		}
		for _, o := range reg.Leaves {
			if m.Deferral.Defers(o, e) {
				return o
			}
		}
	}
	return nil
}
