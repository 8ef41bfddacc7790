package emit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// diagramView is what diagram.mmd.tmpl renders: the diagram's lines,
// indented.
type diagramView struct {
	Header, Title string
	Lines         []string
}

// Mermaid returns the machine's stateDiagram-v2: composite states as
// "state X { ... }" with their initial child, one edge per transition
// labelled "Event [guard] / Action" (a composite state's rules drawn once,
// from it, its eventless rows too; a "*" row from every state it applies
// to), timers as "after" edges, entry and exit in a note, transient
// states drawn as <<choice>> nodes, and the initial and terminal
// pseudo-states.
func Mermaid(m *fsm.Machine) ([]byte, error) {
	v := diagramView{Header: Header, Title: mermaidText(m.Name + " state machine, from " + m.SpecFile)}
	d := &diagram{m: m, loops: map[string]int{}, rows: map[string][2]int{}}
	var top []*fsm.State
	for _, s := range m.Composites {
		if s.Parent == nil {
			top = append(top, s)
		}
	}
	for _, s := range m.States {
		if s.Parent == nil {
			top = append(top, s)
		}
	}
	slices.SortStableFunc(top, func(a, b *fsm.State) int { return a.Pos.Line - b.Pos.Line })
	d.states(top, m.Initial.Path()[0], 1)
	var cells []*fsm.Cell // each state's, in one slice: d.cells keeps none
	for _, s := range m.States {
		cells = cells[:0]
		if s.Choice != nil && s.Completes != nil {
			// The done transition is drawn from the composite state it
			// completes, labelled done (UML's completion transition).
			d.cells(s.Completes, []*fsm.Cell{s.Choice})
		} else if s.Choice != nil {
			cells = append(cells, s.Choice)
		}
		if s.Completion != nil {
			// A parallel state's done transition, labelled done.
			cells = append(cells, s.Completion)
		}
		cells = append(cells, nestedDone(s)...)
		cells = append(cells, s.Handles...)
		for _, c := range s.Inherited {
			if c.Owner == nil {
				cells = append(cells, c)
			}
		}
		d.cells(s, cells)
	}
	for _, c := range m.Shared {
		if c.Owner != nil {
			d.cells(c.Owner, []*fsm.Cell{c})
		}
	}
	for _, t := range m.Timers {
		if t.State.Region == nil { // a region's: with its region's rules
			d.cells(t.State, []*fsm.Cell{t.Cell})
		}
	}
	d.regionEdges()
	for _, e := range d.edges {
		line := "    " + e.From + " --> " + e.To
		if label := e.label(); label != "" {
			line += " : " + label
		}
		d.lines = append(d.lines, line)
	}
	for _, s := range m.States {
		if s.Terminal {
			d.lines = append(d.lines, "    "+s.Name+" --> [*]")
		}
	}
	v.Lines = d.lines
	return execute("diagram.mmd.tmpl", v)
}

// edge is one edge of the diagram: the rules drawn on it, each with its
// events (several for a row with several events, drawn once).
type edge struct {
	From, To string
	parts    []edgePart
}

type edgePart struct {
	r      *fsm.Rule
	events []string
}

// label returns the edge's label: its rules' labels, one per line.
func (e *edge) label() string {
	var lines []string
	for _, p := range e.parts {
		if l := edgeLabel(p.r, p.events); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "<br/>")
}

// diagram collects the lines of a Mermaid diagram.
type diagram struct {
	m     *fsm.Machine
	lines []string
	edges []edge
	// loops indexes the edges whose labels are merged, by "from to": a
	// state's self-loops, and the edges to or from a composite state.
	loops map[string]int
	// rows indexes the parts drawn for each row, branch or timer, by
	// where it is and its states: the rules a row with several events
	// gives a state share one part, which lists the events.
	rows map[string][2]int
}

// states writes the declarations of states at one level: composite
// states as blocks with their initial child, choices, and notes for entry
// and exit.
func (d *diagram) states(list []*fsm.State, initial *fsm.State, depth int) {
	ind := strings.Repeat("    ", depth)
	choice := initial != nil && initial.Transient && !initial.Final && !initial.Composite()
	if choice {
		// A region's transient initial state: a choice, declared before
		// the edge into it, which would otherwise declare a state.
		d.lines = append(d.lines, ind+"state "+initial.Name+" <<choice>>")
	}
	if initial != nil {
		d.lines = append(d.lines, ind+"[*] --> "+initial.Name)
	}
	for _, s := range list {
		switch {
		case choice && s == initial:
		case s.Regions != nil:
			d.regions(s, depth)
		case s.Composite():
			d.lines = append(d.lines, ind+"state "+s.Name+" {")
			d.states(s.Children, s.InitialChild, depth+1)
			if s.History != fsm.HistoryNone {
				// Mermaid has no history pseudostate: a state labelled
				// as UML draws one, H (shallow) or H* (deep).
				label := "H"
				if s.History == fsm.HistoryDeep {
					label = "H*"
				}
				d.lines = append(d.lines, ind+"    state \""+label+"\" as "+historyID(s))
			}
			d.lines = append(d.lines, ind+"}")
		case s.Final:
			// A final state: the composite state is complete once in it.
			d.lines = append(d.lines, ind+s.Name, ind+s.Name+" --> [*]")
		case s.Transient:
			d.lines = append(d.lines, ind+"state "+s.Name+" <<choice>>")
		case s.Parent != nil || s.Entry != nil || s.Exit != nil || slices.ContainsFunc(s.Handles, func(c *fsm.Cell) bool { return c.Fallback != nil }) || len(d.m.OwnDeferrals(s)) > 0:
			// Declared inside its composite state, which edges drawn
			// outside the block would not do, and before a note on it,
			// which Mermaid cannot place on a state not yet declared.
			d.lines = append(d.lines, ind+s.Name)
		}
		var note []string
		for _, h := range []struct {
			what string
			h    *fsm.Hook
		}{{"entry", s.Entry}, {"exit", s.Exit}} {
			if h.h == nil {
				continue
			}
			text := h.what
			if h.h.Effect != nil {
				text += " {" + h.h.Effect.Name + "}"
			}
			if len(h.h.Actions) > 0 {
				var names []string
				for _, a := range h.h.Actions {
					names = append(names, a.Name)
				}
				text += " / " + strings.Join(names, ", ")
			}
			note = append(note, text)
		}
		// A chain of guards without else: where its event goes when no
		// guard holds.
		for _, c := range s.Handles {
			if c.Fallback != nil && !sourcesDecide(c) {
				as := fallbackOf(c)
				if as == "*" {
					as = "the wildcard row"
				}
				note = append(note, c.Event.Name+", if no guard holds, as "+as)
			}
		}
		// A final state, or a parallel state's final states, that may
		// rest: where the machine is when no guard of the done
		// transition holds.
		if s.Rests() {
			note = append(note, "rests here if no guard of done holds")
		}
		if s.RestsFinal() {
			note = append(note, "rests with every region final if no guard of done holds")
		}
		// The events the state defers, as UML writes them in the state.
		for _, e := range d.m.OwnDeferrals(s) {
			note = append(note, e.Name+" / defer")
		}
		if len(note) > 0 {
			d.lines = append(d.lines, ind+"note right of "+s.Name+" : "+strings.Join(note, "<br/>"))
		}
	}
}

// cells draws the transitions of cells from state from.
func (d *diagram) cells(from *fsm.State, cells []*fsm.Cell) {
	for _, c := range cells {
		for _, r := range c.Rules {
			r = shownRule(r)
			if r.Kind != fsm.Transition {
				continue
			}
			from := from
			if r.Group != nil {
				// A nested parallel state's rule, which a region's own
				// state or the parallel state around it holds.
				from = r.Group
			}
			if r.Source != nil {
				// A rule that leaves a parallel state from inside one of
				// its regions, which the parallel state holds; a done
				// transition's, from its composite state.
				from = r.Source
				if r.Done != nil {
					from = r.Done
				}
			}
			if r.Around != nil {
				// A composite state's eventless row, which each state
				// inside it that waits takes as rules of its own: one
				// edge, from the composite state.
				from = r.Around
			}
			to := r.Target
			if to == nil {
				to = from
			}
			var events []string
			if r.Event != nil && r.Timer == nil {
				events = []string{r.Event.Name}
			}
			toName := to.Name
			if r.History != nil {
				toName = historyID(r.History)
			}
			row := fmt.Sprintf("%s %s %s", from.Name, toName, r.Pos)
			if at, ok := d.rows[row]; ok {
				p := &d.edges[at[0]].parts[at[1]]
				p.events = append(p.events, events...)
				continue
			}
			part := edgePart{r: r, events: events}
			if to == from || from.Composite() || to.Composite() || r.History != nil {
				// One edge per pair: Mermaid draws only the last of
				// several self-loops (mermaid-js/mermaid#6132), and lays
				// the labels of parallel edges to or from a composite
				// state on top of one another.
				key := from.Name + " " + toName
				if i, ok := d.loops[key]; ok {
					d.rows[row] = [2]int{i, len(d.edges[i].parts)}
					d.edges[i].parts = append(d.edges[i].parts, part)
					continue
				}
				d.loops[key] = len(d.edges)
			}
			d.rows[row] = [2]int{len(d.edges), 0}
			d.edges = append(d.edges, edge{From: from.Name, To: toName, parts: []edgePart{part}})
		}
	}
}

// historyID is the Mermaid id of a composite state's history.
func historyID(s *fsm.State) string { return s.Name + "_history" }

// edgeLabel returns "Event [guard] / Action, Action (set x=1) (with
// y=event.y)" with the parts a rule has; events are the events of its row
// ("A, B" for a row with several).
func edgeLabel(r *fsm.Rule, events []string) string {
	var parts []string
	switch {
	case r.Timer != nil:
		parts = append(parts, r.Timer.Label())
	case r.Done != nil:
		parts = append(parts, "done")
	case len(events) > 0:
		parts = append(parts, strings.Join(events, ", "))
	}
	switch {
	case r.ShownGuard() != nil:
		// (A rule that leaves a parallel state from inside a region
		// shows no In(State) guard: its source says it.)
		parts = append(parts, "["+r.ShownGuard().Name+"]")
	case r.Else:
		parts = append(parts, "[else]")
	}
	if len(r.Actions) > 0 {
		var acts []string
		for _, e := range r.Actions {
			acts = append(acts, e.Action.Name)
		}
		parts = append(parts, "/ "+strings.Join(acts, ", "))
	}
	if len(r.Consts) > 0 {
		var sets []string
		for _, c := range r.Consts {
			sets = append(sets, mermaidConst(c))
		}
		parts = append(parts, "(set "+strings.Join(sets, ", ")+")")
	}
	if len(r.With) > 0 {
		var with []string
		for _, w := range r.With {
			with = append(with, w.String())
		}
		parts = append(parts, "(with "+strings.Join(with, ", ")+")")
	}
	if r.Local {
		parts = append(parts, "(local)")
	}
	return strings.Join(parts, " ")
}

// mermaidConst writes a constant of set: for a diagram's label: name=value,
// a string between typographic quotes (Mermaid gives '"' a meaning), and
// without them inside.
func mermaidConst(c *fsm.Const) string {
	if c.Duration || !strings.HasPrefix(c.Go, `"`) {
		return c.Name + "=" + mermaidText(c.Text)
	}
	return c.Name + "=“" + strings.NewReplacer("“", " ", "”", " ").Replace(mermaidText(c.Text)) + "”"
}

// mermaidText makes free text safe on one line of a Mermaid file: no line
// breaks, and none of the characters Mermaid gives a meaning.
func mermaidText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r < ' ', r == 0x7f, r == 0x2028, r == 0x2029:
			return ' '
		case strings.ContainsRune(`:;{}[]<>"'#%|`+"`", r):
			return ' '
		}
		return r
	}, s)
}

// nestedDone returns the done transitions of the parallel states nested
// as regions of parallel state s (rules of s that their labels, the
// table and the diagram give to the nested state).
func nestedDone(s *fsm.State) []*fsm.Cell {
	var out []*fsm.Cell
	for _, g := range s.Nested() {
		if g.Completion != nil {
			out = append(out, g.Completion)
		}
	}
	return out
}

// sourcesDecide reports whether every rule of cell c is a row of a state
// inside the regions of c's parallel state written as its rule (Source),
// each source's last unguarded or else: its event goes on only where no
// source is active, which the rows at the sources already say.
func sourcesDecide(c *fsm.Cell) bool {
	lasts := sourceLasts(c)
	return lasts != nil && !slices.ContainsFunc(lasts, func(r *fsm.Rule) bool { return r.ShownGuard() != nil && !r.Else })
}

// sourceLasts returns, when every rule of cell c is a row of a state
// inside the regions of c's parallel state written as its rule (Source),
// the last rule of each source, in order; nil otherwise.
func sourceLasts(c *fsm.Cell) []*fsm.Rule {
	var out []*fsm.Rule
	for i, r := range c.Rules {
		if r.Source == nil {
			return nil
		}
		if i+1 == len(c.Rules) || c.Rules[i+1].Source != r.Source {
			out = append(out, r)
		}
	}
	return out
}
