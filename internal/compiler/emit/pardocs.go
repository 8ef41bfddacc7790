package emit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file writes the regions of parallel states into the diagram, the
// table and the generated tests (see parallel.go).

// regionDoc describes the regions of a parallel state for its doc
// comment.
func regionDoc(s *fsm.State) string {
	if s.Regions == nil {
		return ""
	}
	var names, groups []string
	for _, reg := range s.Regions {
		names = append(names, reg.Root.Name)
		for _, g := range firstIn(reg) {
			inner := childNames(g)
			var hooks []string
			for _, h := range []struct {
				what string
				h    *fsm.Hook
			}{{"on entry", g.Entry}, {"on exit", g.Exit}} {
				if h.h != nil {
					var names []string
					for _, a := range h.h.Actions {
						names = append(names, a.Name)
					}
					hooks = append(hooks, list(names)+" "+h.what)
				}
			}
			emits := ""
			if len(hooks) > 0 {
				emits = ", which emits " + strings.Join(hooks, " and ")
			}
			groups = append(groups, fmt.Sprintf(" %s are the regions of %s, a parallel state nested in it%s.", strings.TrimSpace(list(inner)), g.Name, emits))
		}
	}
	var hosted []*fsm.State
	for _, reg := range s.Flat {
		if q := reg.Within; q != nil && !slices.Contains(hosted, q) {
			hosted = append(hosted, q)
			var inner []string
			for _, r := range q.Regions {
				inner = append(inner, r.Root.Name)
			}
			groups = append(groups, fmt.Sprintf(" %s are the regions of %s, a parallel state inside region %s, active while %s is in it.", strings.TrimSpace(list(inner)), q.Name, reg.Host.Root.Name, reg.Host.Root.Name))
		}
	}
	return fmt.Sprintf("It is a parallel state: its regions, %s, are all active while it is, each in one of its states.", strings.TrimSpace(list(names))) + strings.Join(groups, "")
}

// firstIn returns the parallel states nested as regions whose first
// region is reg, outermost first: they are described with it.
func firstIn(reg *fsm.Region) []*fsm.State {
	var out []*fsm.State
	for _, g := range reg.Groups {
		if g.Regions[0] == reg {
			out = append(out, g)
		}
	}
	return out
}

// childNames names the states right under parallel state g, nested in
// another: its regions' own states, and the parallel states nested in it.
func childNames(g *fsm.State) []string {
	var out []string
	for _, r := range g.Regions {
		if n := g.Child(r).Name; !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// regionWhere is where the table places region reg: region `Text` of
// `Editing`, in region `Work` of `Run` (each host in turn, at any depth).
func regionWhere(reg *fsm.Region) string {
	switch {
	case reg.Within != nil:
		return "region " + code(reg.Root.Name) + " of " + code(reg.Within.Name) + ", in " + regionWhere(reg.Host)
	case reg.Group != nil:
		return "region " + code(reg.Root.Name) + " of " + code(reg.Group.Name) + ", in " + code(reg.Parallel.Name)
	}
	return "region " + code(reg.Root.Name) + " of " + code(reg.Parallel.Name)
}

// regionOwner names the parallel state whose region reg is: its group
// (a parallel state nested as a region) and the parallel state around.
func regionOwner(reg *fsm.Region) string {
	if reg.Within != nil {
		return reg.Within.Name + ", in region " + reg.Host.Root.Name + " of " + regionOwner(reg.Host)
	}
	if reg.Group != nil {
		return reg.Group.Name + ", in " + reg.Parallel.Name
	}
	return reg.Parallel.Name
}

// stateLit is a state's value in the generated tests, its fields zero: a
// parallel state's regions in the leaves cfg gives (by Region.Index), or
// their initial leaves.
func stateLit(s *fsm.State, cfg []*fsm.State) jen.Code {
	var vals []jen.Code
	leaves := map[*fsm.Region]*fsm.State{}
	for _, reg := range s.Flat {
		leaf := reg.Resting()
		switch {
		case reg.Host != nil && leaves[reg.Host] != reg.Within:
			continue // its parallel state is not active: zero
		case reg.Host != nil && cfg != nil:
			leaf = cfg[reg.Index]
		case cfg != nil && cfg[reg.Index] != nil:
			leaf = cfg[reg.Index]
		}
		leaves[reg] = leaf
		vals = append(vals, kv(reg.Field, jen.Id(leaf.KindName)))
	}
	return jen.Id(s.GoName).Values(vals...)
}

// regionSamples adds to the sample fields of a parallel state's value its
// regions' initial leaves.
func regionSamples(m *fsm.Machine, d *fsm.Decl, fields jen.Dict) {
	for _, s := range m.States {
		if &s.Decl == d {
			leaves := map[*fsm.Region]*fsm.State{}
			for _, reg := range s.Flat {
				if reg.Host == nil || leaves[reg.Host] == reg.Within {
					leaves[reg] = reg.Resting()
					fields[jen.Id(reg.Field)] = jen.Id(reg.Resting().KindName)
				}
			}
		}
	}
}

// regions declares a parallel state in the diagram: a block whose
// regions are concurrent sections, separated by "--" (Mermaid's
// concurrency), each entered through its initial pseudo-state.
func (d *diagram) regions(s *fsm.State, depth int) {
	ind := strings.Repeat("    ", depth)
	d.lines = append(d.lines, ind+"state "+s.Name+" {")
	seen := map[*fsm.State]bool{}
	for _, reg := range s.Regions {
		ch := s.Child(reg)
		if seen[ch] {
			continue // drawn with its parallel state
		}
		if len(seen) > 0 {
			d.lines = append(d.lines, ind+"    --")
		}
		seen[ch] = true
		if ch != reg.Root {
			// A parallel state nested as a region: a block of its own
			// whose regions are concurrent sections in turn.
			d.lines = append(d.lines, ind+"    [*] --> "+ch.Name)
			d.regions(ch, depth+1)
			d.groupNote(ch, depth+1)
			continue
		}
		d.states([]*fsm.State{reg.Root}, reg.Root, depth+1)
	}
	d.lines = append(d.lines, ind+"}")
	if s.History != fsm.HistoryNone {
		// Its deep history, beside the block: inside, Mermaid would draw
		// it in a region's section.
		d.lines = append(d.lines, ind+"state \"H*\" as "+historyID(s))
	}
}

// groupNote writes the entry and exit of g, a parallel state nested as
// a region, and the events it defers, as a note on it: "note right of
// Media : entry / MediaIn<br/>Sync / defer".
func (d *diagram) groupNote(g *fsm.State, depth int) {
	var note []string
	for _, h := range []struct {
		what string
		h    *fsm.Hook
	}{{"entry", g.Entry}, {"exit", g.Exit}} {
		if h.h == nil {
			continue
		}
		var names []string
		for _, a := range h.h.Actions {
			names = append(names, a.Name)
		}
		note = append(note, h.what+" / "+strings.Join(names, ", "))
	}
	for _, e := range d.m.OwnDeferrals(g) {
		note = append(note, e.Name+" / defer")
	}
	if len(note) > 0 {
		d.lines = append(d.lines, strings.Repeat("    ", depth)+"note right of "+g.Name+" : "+strings.Join(note, "<br/>"))
	}
}

// regionEdges draws the rules of the regions: each leaf's own, and each
// composite state's of a region once, from it.
func (d *diagram) regionEdges() {
	var shared []*fsm.Cell
	seen := map[*fsm.Cell]bool{}
	for _, s := range d.m.RegionLeaves() {
		if s.Eventless() {
			// A transient state's choice, or the eventless rules of a
			// state that waits, drawn from it.
			d.cells(s, []*fsm.Cell{s.Choice})
		} else if s.Settles() {
			// The done transition of a composite state inside the
			// region, drawn from it, labelled done.
			d.cells(s.Completes, []*fsm.Cell{s.Choice})
		}
		if s.Completion != nil {
			// The done transition of a parallel state inside the region,
			// labelled done.
			d.cells(s, []*fsm.Cell{s.Completion})
		}
		d.cells(s, s.Handles)
		for _, c := range s.Inherited {
			if c.Owner != nil && !seen[c] {
				seen[c] = true
				shared = append(shared, c)
			}
		}
	}
	for _, c := range shared {
		d.cells(cellOwner(c), []*fsm.Cell{c})
	}
	for _, reg := range d.m.Regions {
		for _, t := range reg.Timers {
			d.cells(t.Owner(), []*fsm.Cell{t.Cell})
		}
	}
}

// addRegions adds the regions of the parallel states to the table: their
// leaves and composite states, what each leaf leaves to its parallel
// state, and their rules.
func (v *tableView) addRegions(m *fsm.Machine) {
	var shared []*fsm.Cell
	var comps []declRow
	seen := map[*fsm.Cell]bool{}
	for _, reg := range m.Regions {
		for _, g := range firstIn(reg) {
			// A parallel state nested as a region: its regions' roots.
			var kids []string
			for _, n := range childNames(g) {
				kids = append(kids, code(n))
			}
			doc := strings.TrimSpace(g.Doc + " Parallel state, a region of " + reg.Parallel.Name + ".")
			if g.RestsFinal() {
				doc += " Rests with every region final if no guard of done holds."
			}
			comps = append(comps, declRow{Name: g.Name, Kind: strings.Join(kids, ", "), Doc: mdText(doc)})
		}
		where := regionWhere(reg)
		// The state the region leaves an event to: its parallel state, or
		// the one inside another region that holds it.
		owner := reg.Parallel
		if reg.Within != nil {
			owner = reg.Within
		}
		for _, s := range reg.Leaves {
			kind := where
			switch {
			case s == reg.Initial && s.Waits:
				kind = "initial, waits on its eventless rules in " + where
			case s == reg.Initial && s.Eventless():
				kind = "initial, transient in " + where
			case s == reg.Initial:
				kind = "initial in " + where
			case s.Final && s.Parent == reg.Root:
				kind = "final in " + where
			case s.Final:
				// A final state of a composite state inside the region.
				kind = "final in " + code(s.Parent.Name) + ", " + where
			case s.Waits:
				kind = "waits on its eventless rules in " + where
			case s.Eventless():
				kind = "transient in " + where
			}
			if s.Regions != nil {
				kind = "parallel, " + kind
			}
			if s.RestsFinal() {
				kind += ", rests with every region final if no guard of done holds"
			}
			v.States = append(v.States, declRow{Name: s.Name, Kind: kind, Doc: mdText(s.Doc)})
			var out, up []string
			taken := map[*fsm.Region][]string{}
			var takers []*fsm.Region
			for _, c := range s.Inherited {
				switch t := fsm.TakesAll(owner, c.Event); {
				case c.Out() && t != nil:
					if taken[t] == nil {
						takers = append(takers, t)
					}
					taken[t] = append(taken[t], code(c.Event.Name))
				case c.Out():
					if oc := owner.Cell(c.Event); oc != nil && slices.ContainsFunc(oc.Rules, func(r *fsm.Rule) bool { return r.Source != nil && r.Source.Contains(s) }) {
						// Its own rule, or one of a state around it,
						// that leaves the parallel state, which the
						// parallel state holds.
						continue
					}
					if oc := owner.Cell(c.Event); oc != nil && len(oc.Rules) > 0 && oc.Rules[0].Group != nil {
						// A nested parallel state's rule that its
						// parallel state holds.
						up = append(up, code(c.Event.Name)+" by "+code(oc.Rules[0].Group.Name))
						continue
					}
					out = append(out, code(c.Event.Name))
				case !seen[c]:
					seen[c] = true
					shared = append(shared, c)
					up = append(up, code(c.Event.Name)+" by "+code(cellOwner(c).Name))
				default:
					up = append(up, code(c.Event.Name)+" by "+code(cellOwner(c).Name))
				}
			}
			if len(out) > 0 {
				up = append(up, strings.Join(out, ", ")+" by "+code(owner.Name))
			}
			for _, t := range takers {
				up = append(up, strings.Join(taken[t], ", ")+" to region "+code(t.Root.Name)+", which takes them in every state")
			}
			if len(up) > 0 {
				v.Inherits = append(v.Inherits, inheritRow{State: code(s.Name), Events: strings.Join(up, "; ")})
			}
			v.addRules(m, s)
		}
		for _, c := range reg.Composites {
			var kids []string
			for _, k := range c.Children {
				kids = append(kids, code(k.Name))
			}
			doc := c.Doc
			if c == reg.Root {
				doc = strings.TrimSpace(doc + " Region of " + regionOwner(reg) + ".")
			} else {
				doc = strings.TrimSpace(doc + " Substate of " + c.Parent.Name + ".")
			}
			comps = append(comps, declRow{Name: c.Name, Kind: strings.Join(kids, ", "), Doc: mdText(doc)})
		}
	}
	for _, reg := range m.Regions {
		for _, t := range reg.Timers {
			shared = append(shared, t.Cell)
		}
	}
	v.addCells(m, nil, shared)
	v.Composites = append(v.Composites, comps...)
}

// cellOwner returns the state whose rules shared cell c holds: its
// Owner, or the parallel state nested as a region whose list entry or
// rule it holds.
func cellOwner(c *fsm.Cell) *fsm.State {
	if len(c.Rules) > 0 && c.Rules[0].Group != nil {
		return c.Rules[0].Group
	}
	return c.Owner
}
