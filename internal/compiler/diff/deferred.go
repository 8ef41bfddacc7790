package diff

import "github.com/fsmgen/fsmgen/internal/compiler/fsm"

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
