package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file refuses eventless rules that could loop through a parallel
// state within one step: a rule without an event enters parallel state
// P, a transient state, a state that waits or a done transition inside
// P's regions leaves P in that step (Rule.Leaves), or P's own done
// transition does once they end every region, and the rules after it
// lead back into P. The build's loop check (check.go) sees the states
// outside regions only; this one follows the rules of the regions too.
// As that check, it cannot tell that guards never hold together, and
// refuses every such loop.

// loopNode is a step of such a loop: a state outside regions whose
// eventless rules are taken in the step that enters it, or a parallel
// state entered by rule via, its regions in the leaves via enters them in.
type loopNode struct {
	s   *State
	via *Rule // for a parallel state
}

// key identifies node n: a parallel state by the leaves its regions are
// entered in.
func (n loopNode) key() string {
	if n.via == nil {
		return n.s.Name
	}
	var sb strings.Builder
	sb.WriteString(n.s.Name)
	for _, reg := range n.s.Flat {
		if l := n.entered(reg); l != nil {
			sb.WriteString(" " + l.Name)
		}
	}
	return sb.String()
}

// entered returns the leaf region reg of n's parallel state is entered in
// by n.via; nil for a rule into a history, which may resume any.
func (n loopNode) entered(reg *Region) *State {
	if n.via.History != nil || n.via.Resume != nil {
		return nil
	}
	return n.via.EnteredLeaf(reg)
}

// eventlessLoops reports, and returns whether it found, eventless rules
// that could loop through a parallel state within one step.
func eventlessLoops(m *Machine, diags *diag.List) bool {
	var visit func(n loopNode, path []loopNode) bool
	visit = func(n loopNode, path []loopNode) bool {
		for i, p := range path {
			if p.key() == n.key() {
				names := make([]string, 0, len(path)-i+1)
				through := false
				for _, q := range path[i:] {
					names = append(names, q.s.Name)
					through = through || q.via != nil
				}
				if !through {
					return false // check.go's
				}
				diags.Errorf(n.s.Pos, "eventless transitions could loop without an event while their guards hold: %s → %s, through the eventless rules or done transitions inside the regions of a parallel state that leave it: the checker cannot tell that their guards never hold together, so name the event that moves one of them (a row with \"on\"), or lead one elsewhere", strings.Join(names, " → "), n.s.Name)
				return true
			}
		}
		path = append(path, n)
		for _, r := range n.next() {
			for _, v := range append([]*Rule{r}, r.Variants...) {
				if v.Kind != Transition || v.To == nil {
					continue
				}
				switch {
				case v.To.Regions != nil && v.To.Region == nil:
					if visit(loopNode{s: v.To, via: v}, path) {
						return true
					}
				case v.To.Choice != nil && v.To.Region == nil:
					if visit(loopNode{s: v.To}, path) {
						return true
					}
				}
			}
		}
		return false
	}
	for _, s := range m.States {
		if s.Choice != nil && s.Region == nil && visit(loopNode{s: s}, nil) {
			return true
		}
	}
	for _, r := range m.Rules {
		// A rule on an event into a parallel state: the loops that
		// begin in the step it enters it.
		if r.Kind == Transition && r.To != nil && r.To.Regions != nil && r.To.Region == nil && visit(loopNode{s: r.To, via: r}, nil) {
			return true
		}
	}
	return false
}

// next returns the rules node n goes on by in the same step: a state's
// eventless rules; for a parallel state, the rules that leave it from
// the leaves its regions may reach by eventless rules and done
// transitions from those they are entered in, and its own done
// transition when every region may so reach a final leaf.
func (n loopNode) next() []*Rule {
	if n.via == nil {
		return n.s.Choice.Rules
	}
	var out []*Rule
	ends := true
	for _, reg := range n.s.Flat {
		var seen []*State
		var queue []*State
		if l := n.entered(reg); l != nil {
			queue = []*State{l}
		} else {
			queue = slices.Clone(reg.Leaves)
		}
		final := false
		for len(queue) > 0 {
			l := queue[0]
			queue = queue[1:]
			if slices.Contains(seen, l) {
				continue
			}
			seen = append(seen, l)
			final = final || slices.Contains(reg.Finals, l)
			for c := l.Choice; c != nil && !c.Out(); c = c.Fallback {
				for _, x := range c.Rules {
					switch {
					case x.Leaves != nil:
						out = append(out, x.Leaves)
					case x.To != nil:
						for _, v := range append([]*Rule{x}, x.Variants...) {
							if v.To != nil && v.To.Region == reg {
								queue = append(queue, v.To)
							}
						}
					}
				}
			}
		}
		ends = ends && (final || reg.Host != nil)
	}
	if ends && n.s.Completion != nil {
		out = append(out, n.s.Completion.Rules...)
	}
	return out
}
