package emit

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/templates"
)

// This file writes the Markdown table of a machine (table.md.tmpl); docs.go
// writes its Mermaid diagram.

// tableView is what table.md.tmpl renders.
type tableView struct {
	Header, Name, Doc, Spec  string
	DiagramName, DiagramLink string
	States                   []declRow
	Events, Actions          []declRow
	Transitions              []transitionRow
	Refusals                 []refusalRow
	Reasons                  []string
	Composites               []declRow
	Inherits                 []inheritRow
	Accessors                []accessorRow
}

type accessorRow struct{ Field, Funcs, States string }

type declRow struct{ Name, Kind, Fields, Doc string }

type transitionRow struct{ From, Event, Guard, To, Effect, Action, Where string }

type refusalRow struct{ State, Ignored, Rejected string }

type inheritRow struct{ State, Events string }

// Markdown returns the machine's documentation: its states, events and
// actions with their fields, the transition table, and what each state
// ignores or rejects.
func Markdown(m *fsm.Machine) ([]byte, error) {
	v := tableView{Header: Header, Name: m.Name, Doc: mdText(m.Doc), Spec: m.SpecFile}
	if m.Output.Diagram != "" && m.Output.Table != "" {
		v.DiagramName = path.Base(m.Output.Diagram)
		v.DiagramLink = relPath(path.Dir(m.Output.Table), m.Output.Diagram)
	}
	for _, s := range m.States {
		v.States = append(v.States, declRow{Name: s.Name, Kind: stateKinds(s), Fields: mdFields(s.Fields), Doc: mdText(s.Doc)})
		if len(s.Inherited) > 0 {
			v.Inherits = append(v.Inherits, inheritRow{State: code(s.Name), Events: inheritedEvents(s.Inherited)})
		}
	}
	for _, e := range m.Events {
		v.Events = append(v.Events, declRow{Name: e.Name, Fields: mdFields(e.Fields), Doc: mdText(e.Doc)})
	}
	for _, a := range m.Actions {
		v.Actions = append(v.Actions, declRow{Name: a.Name, Fields: mdFields(a.Fields), Doc: mdText(a.Doc)})
	}
	for _, s := range m.States {
		v.addRules(m, s)
	}
	v.addRules(m, nil)
	v.addRegions(m)
	for _, s := range m.Composites {
		d := s.Doc
		if p := s.Parent; p != nil {
			d = strings.TrimSpace(d + " Substate of " + p.Name + ".")
		}
		var kids []string
		for _, c := range s.Children {
			kids = append(kids, code(c.Name))
		}
		v.Composites = append(v.Composites, declRow{Name: s.Name, Kind: strings.Join(kids, ", "), Fields: mdFields(s.Own), Doc: mdText(d)})
	}
	for _, a := range m.Accessors {
		states := "every state"
		if a.Owner != nil {
			states = "every state inside " + code(a.Owner.Name)
		}
		v.Accessors = append(v.Accessors, accessorRow{Field: code(a.Data.Name + " " + a.Data.Type), Funcs: code(a.Of) + ", " + code(a.With), States: states})
	}
	return execute("table.md.tmpl", v)
}

// stateKinds lists what is special about a state: "initial", "terminal",
// "transient", "final" (and, for a final state that may rest, that it
// rests if no guard of its composite state's done transition holds).
func stateKinds(s *fsm.State) string {
	var kinds []string
	for _, k := range []struct {
		on   bool
		name string
	}{{s.Regions != nil, "parallel"}, {s.Initial, "initial"}, {s.Terminal, "terminal"}, {s.Final, "final"}, {s.Rests(), "rests if no guard of done holds"}, {s.RestsFinal(), "rests with every region final if no guard of done holds"}, {s.Transient && !s.Final, "transient"}, {s.Waits, "waits on its eventless rules"}} {
		if k.on {
			kinds = append(kinds, k.name)
		}
	}
	return strings.Join(kinds, ", ")
}

// code renders a name as Markdown code, or "" for none.
// inheritedEvents lists the events of a state's inherited cells by the
// owner of the rule each takes, owners in the order they first come:
// "`E1`, `E2` by `*`; `E3` by `Parent`". It writes the list once, into a
// builder of the right size: a state of the 600 × 600 spec inherits 599
// events, from one or two owners.
func inheritedEvents(cells []*fsm.Cell) string {
	var owners []*fsm.State
	size := 0
	for _, c := range cells {
		if !slices.Contains(owners, c.Owner) {
			owners = append(owners, c.Owner)
			size += len(c.Owner.String()) + 8
		}
		size += len(c.Event.Name) + 4
	}
	var b strings.Builder
	b.Grow(size)
	for i, o := range owners {
		if i > 0 {
			b.WriteString("; ")
		}
		first := true
		for _, c := range cells {
			if c.Owner != o {
				continue
			}
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteByte('`')
			b.WriteString(c.Event.Name)
			b.WriteByte('`')
		}
		b.WriteString(" by `" + o.String() + "`")
	}
	return b.String()
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// addRules adds a state's rules (or, for nil, the "*" rows) to the view:
// transitions and guarded refusals to the transition table, unguarded
// refusals to the state's row of ignored and rejected events, and reasons
// given in the spec to the list under it.
func (v *tableView) addRules(m *fsm.Machine, s *fsm.State) {
	var cells []*fsm.Cell
	if s == nil {
		cells = slices.Clone(m.Shared)
		for _, t := range m.Timers {
			if t.State.Region == nil { // a region's: with its region's rules
				cells = append(cells, t.Cell)
			}
		}
	} else {
		cells = append(append(cells, s.Handles...), s.Refuses...)
		if s.Choice != nil {
			cells = append(cells, s.Choice)
		}
		if s.Completion != nil {
			cells = append(cells, s.Completion)
		}
		cells = append(cells, nestedDone(s)...)
	}
	v.addCells(m, s, cells)
}

// addCells adds the rules of cells, those of state s (nil: of many
// states), to the view.
func (v *tableView) addCells(m *fsm.Machine, s *fsm.State, cells []*fsm.Cell) {
	var ignored, rejected []string
	var rules []*fsm.Rule
	falls := map[*fsm.Rule]*fsm.Cell{} // the last rule of an open chain: its cell, whose Fallback is where its event goes next
	for _, c := range cells {
		for _, r := range c.Rules {
			rules = append(rules, shownRule(r))
		}
		if c.Fallback == nil {
			continue
		}
		if lasts := sourceLasts(c); lasts != nil {
			// Rows of states inside the regions written as the parallel
			// state's rules: the event goes on where a source's guards
			// all fail (or no source is active, which needs no line).
			for _, r := range lasts {
				if r.ShownGuard() != nil && !r.Else {
					falls[r] = c
				}
			}
			continue
		}
		// (A branch that leaves a parallel state, in a region's chain,
		// has no line: the line of the last branch before it says.)
		i := len(c.Rules) - 1
		for i > 0 && c.Rules[i].Leaves != nil {
			i--
		}
		falls[c.Rules[i]] = c
	}
	slices.SortStableFunc(rules, func(a, b *fsm.Rule) int { return a.Index - b.Index })
	// The rules a transition with several events gives a state share one
	// line of the table, which lists the events. (The rules of a state's
	// ignore and reject lists keep a line each, or go to the lists below.)
	rows := map[string]int{}
	for _, r := range rules {
		if r.Leaves != nil {
			continue // the parallel state's rule (Leaves) has its line
		}
		key := fmt.Sprintf("%s %s", r.Owner().String(), r.Pos)
		if i, ok := rows[key]; ok && !r.Listed && r.Event != nil && r.Timer == nil {
			v.Transitions[i].Event += ", " + code(r.Event.Name)
			if r.Kind == fsm.Reject {
				v.Reasons = append(v.Reasons, reasonLine(r))
			}
			continue
		}
		row := transitionRow{From: code(r.Owner().String()), Event: "(eventless)", Where: fmt.Sprintf("%d", r.Pos.Line)}
		switch {
		case r.Done != nil && r.Done == r.From:
			row.From, row.Event = code(r.Owner().Name)+" (every region final)", "done"
		case r.Done != nil:
			final := r.From
			if r.Source != nil {
				final = r.Source // one that leaves a parallel state (see fsm's parleavedone.go)
			}
			row.From, row.Event = code(final.Name)+" (final in "+code(r.Done.Name)+")", "done"
		}
		switch {
		case r.Timer != nil && r.Timer.DelayFunc != nil:
			row.Event = "after " + code(r.Timer.DelayFunc.Name) + timerID(r.Timer)
		case r.Timer != nil:
			row.Event = "after " + r.Timer.DelayText + timerID(r.Timer)
		case r == m.Stale:
			row.From, row.Event = "*", code(r.Event.Name)+" of a timer not running"
		case r.Event != nil:
			row.Event = code(r.Event.Name)
		}
		switch {
		case r.ShownGuard() != nil:
			// (A rule that leaves a parallel state from inside a region
			// shows no In(State) guard: its source says it.)
			row.Guard = code(r.ShownGuard().Name)
		case r.Else:
			row.Guard = "else"
		}
		guarded := r.Guard != nil || r.Else
		switch {
		case r.Kind == fsm.Transition:
			row.To = "(stays)"
			switch {
			case r.History != nil:
				row.To = code(r.History.Name + ".history")
			case r.Target != nil:
				row.To = code(r.Target.Name)
			}
			row.Effect = effectCell(r)
			var acts []string
			for _, e := range r.Actions {
				acts = append(acts, code(e.Action.Name))
			}
			row.Action = strings.Join(acts, ", ")
			rows[key] = len(v.Transitions)
			v.Transitions = append(v.Transitions, row)
		case r.Kind == fsm.Defer:
			row.To = "(deferred)"
			rows[key] = len(v.Transitions)
			v.Transitions = append(v.Transitions, row)
		case r.Kind == fsm.Ignore && (guarded || s == nil):
			row.To = "(ignored)"
			rows[key] = len(v.Transitions)
			v.Transitions = append(v.Transitions, row)
		case r.Kind == fsm.Ignore:
			ignored = append(ignored, r.Event.Name)
		case guarded || s == nil:
			row.To = "(rejected)"
			rows[key] = len(v.Transitions)
			v.Transitions = append(v.Transitions, row)
			if !r.Listed {
				v.Reasons = append(v.Reasons, reasonLine(r))
			}
		default:
			rejected = append(rejected, r.Event.Name)
			if !r.Listed {
				v.Reasons = append(v.Reasons, reasonLine(r))
			}
		}
		if f := falls[r]; f != nil {
			v.Transitions = append(v.Transitions, transitionRow{From: row.From, Event: row.Event, Guard: "none holds", To: "as " + fallbackName(f), Where: row.Where})
		}
	}
	if s != nil && len(ignored)+len(rejected) > 0 {
		v.Refusals = append(v.Refusals, refusalRow{State: code(s.Name), Ignored: strings.Join(ignored, ", "), Rejected: strings.Join(rejected, ", ")})
	}
}

// effectCell writes what a rule computes, for the table's Effect column:
// its effect, the constants it sets and where it takes the values its
// with: names.
func effectCell(r *fsm.Rule) string {
	var parts []string
	if r.Effect != nil {
		parts = append(parts, code(r.Effect.Name))
	}
	if len(r.Consts) > 0 {
		var sets []string
		for _, c := range r.Consts {
			sets = append(sets, c.String())
		}
		parts = append(parts, "set "+mdText(strings.Join(sets, ", ")))
	}
	if len(r.With) > 0 {
		var with []string
		for _, w := range r.With {
			with = append(with, w.String())
		}
		parts = append(parts, "with "+mdText(strings.Join(with, ", ")))
	}
	return strings.Join(parts, "; ")
}

// reasonLine is the line under the table that gives why a rule rejects
// its event: "`State` × `Event` [guard]: reason".
func reasonLine(r *fsm.Rule) string {
	g := ""
	switch {
	case r.ShownGuard() != nil:
		g = " [" + r.ShownGuard().Name + "]"
	case r.Else:
		g = " [else]"
	}
	return fmt.Sprintf("`%s` × `%s`%s: %s", r.From.String(), r.Event.Name, g, mdText(r.Reason))
}

func mdFields(fs []*fsm.Field) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		parts = append(parts, "`"+f.Name+" "+strings.ReplaceAll(f.Type, "|", "")+"`")
	}
	return strings.Join(parts, ", ")
}

// mdText makes free text safe in a Markdown table cell: one line, table
// pipes escaped, and HTML and emphasis characters rendered as text.
func mdText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '|', '\\', '`', '*', '_', '[', ']', '<', '>', '#', '!':
			b.WriteByte('\\')
		case 0x2028, 0x2029:
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// relPath returns the slash path of target relative to dir; both are
// relative to the same directory.
func relPath(dir, target string) string {
	up := 0
	d := path.Clean(dir)
	for d != "." && !strings.HasPrefix(target+"/", d+"/") {
		d = path.Dir(d)
		up++
	}
	rest := target
	if d != "." {
		rest = strings.TrimPrefix(target, d+"/")
	}
	return strings.Repeat("../", up) + rest
}

func execute(name string, view any) ([]byte, error) {
	t, err := templates.Parse(name)
	if err != nil {
		return nil, fmt.Errorf("load template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, view); err != nil {
		return nil, fmt.Errorf("render template %s: %w", name, err)
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// timerID is a timer's id as the table shows it after the delay: " (id)",
// or nothing for a timer without one.
func timerID(t *fsm.Timer) string {
	if t.ID == "" {
		return ""
	}
	return " (" + code(t.ID) + ")"
}

// fallbackName names the rule an open chain falls back to: "`Closed`",
// or "the `*` row".
func fallbackName(c *fsm.Cell) string {
	if as := fallbackOf(c); as != "*" {
		return code(as)
	}
	return "the `*` row"
}

// fallbackOf names where the event of cell c, a chain of guards without
// else, goes when no guard holds: the state whose rule takes it, the
// "*" row, or for a state inside a region the parallel state its region
// leaves it to (the region's stand-in for the "*" row).
func fallbackOf(c *fsm.Cell) string {
	switch f := c.Fallback; {
	case f.Owner != nil:
		return f.Owner.Name
	case c.State != nil && c.State.Region != nil && c.State.Region.Within != nil:
		return c.State.Region.Within.Name
	case c.State != nil && c.State.Region != nil:
		return c.State.Region.Parallel.Name
	}
	return "*"
}
