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
