package export_test

// This file walks the tree of a random chart's states (see
// randomchart_test.go).

// region returns the region n is inside, or nil.
func (n *rnode) region() *rnode {
	for p := n.parent; p != nil; p = p.parent {
		if p.kind == regionNode {
			return p
		}
	}
	return nil
}

// inside reports whether n is a or inside it.
func (n *rnode) inside(a *rnode) bool {
	for p := n; p != nil; p = p.parent {
		if p == a {
			return true
		}
	}
	return false
}

// deepUnder reports whether a state around n keeps a deep history.
func (n *rnode) deepUnder() bool {
	for p := n.parent; p != nil; p = p.parent {
		if p.history == "deep" {
			return true
		}
	}
	return false
}

// deepAbove returns the innermost state around n that keeps a deep
// history, or nil.
func (n *rnode) deepAbove() *rnode {
	for p := n.parent; p != nil; p = p.parent {
		if p.history == "deep" {
			return p
		}
	}
	return nil
}

// all lists the nodes under n, n first, in document order.
func (n *rnode) all() []*rnode {
	out := []*rnode{n}
	for _, c := range n.children {
		out = append(out, c.all()...)
	}
	return out
}

// top returns the top-level state n is in.
func (n *rnode) top() *rnode {
	for n.parent != nil {
		n = n.parent
	}
	return n
}

// mayRest reports whether s's done transition may end its guards
// without an else: outside regions, or for a composite state or a
// parallel state inside a region (at any depth), with no deep history
// around, or only one around the parallel state that is not inside
// another region, for a composite state inside its regions (a deep
// history of the parallel state or around it remembers the region
// resting in the final state, and resuming it raises the done event
// again).
func (s *rnode) mayRest() bool {
	if s.region() == nil {
		return true
	}
	if s.kind != compositeNode && !s.hosted {
		return false
	}
	d := s.deepAbove()
	if d == nil {
		return true
	}
	if s.kind != compositeNode || d.inside(s.region()) {
		return false
	}
	for p := s.parent; p != nil; p = p.parent {
		if p.hosted {
			return false
		}
	}
	return true
}

// restingInside returns the states inside the regions of the parallel
// states that n, outside every region, is or holds, which In() may name
// (as guard does: no region's own state, nested parallel state,
// transient state, or final state a done transition leaves at once).
func restingInside(n *rnode) []string {
	if n.region() != nil {
		return nil
	}
	var out []string
	for _, s := range n.all() {
		if s.region() != nil && s.kind != regionNode && !s.group && !s.transient && (!s.final || s.parent.kind == regionNode) {
			out = append(out, s.name)
		}
	}
	return out
}
