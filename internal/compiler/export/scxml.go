package export

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// The namespaces of the SCXML document: SCXML's, and fsmgen's for the
// attributes that keep what SCXML does not run (rejections, set: and
// with:, timer ids), which an SCXML processor ignores.
const (
	scxmlNS  = "http://www.w3.org/2005/07/scxml"
	fsmgenNS = "urn:fsmgen:export"
)

// scxmlWriter writes a chart as an SCXML document.
type scxmlWriter struct {
	c *chart
	p problems
	b bytes.Buffer
	// wrapper is the id of the state around the whole machine, which
	// holds the "*" rows (an <scxml> element has no transitions); "" when
	// the machine has none.
	wrapper string
}

// writeSCXML writes the chart as an SCXML 1.0 document with the ECMAScript
// data model:
//
//	<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" name="Conn" datamodel="ecmascript" initial="CLOSED">
//	  <state id="CLOSED">
//	    <transition event="OPEN" cond="passive(_event)" target="LISTEN">
//	      <send target="#_parent" event="CreateTCB"/>
//	    </transition>
func writeSCXML(c *chart) ([]byte, diag.List, error) {
	w := &scxmlWriter{c: c}
	common(c, &w.p, "SCXML")
	scxmlParallel(c, &w.p)
	scxmlGroupRules(c, &w.p)
	scxmlDeepFinal(c, &w.p)
	// A final state inside a composite state or a region raises
	// done.state.ID (SCXML 1.0 §3.7), which a transition on an event named
	// done would take too.
	raisesDone := slices.ContainsFunc(c.nodes(), func(n *node) bool {
		return n.kind == Final && (n.state.Parent != nil || n.state.Region != nil)
	})
	for _, n := range c.nodes() {
		for _, t := range n.triggers {
			if t.event != nil && t.event.Name == "fsmgen" {
				w.p.refuse(t.event.Pos, "event fsmgen: SCXML matches event names by their dotted prefix, so it would take the timers' events (fsmgen.timer...) too: rename the event")
			}
			if t.event != nil && t.event.Name == "done" && raisesDone {
				w.p.refuse(t.event.Pos, "event done: SCXML matches event names by their dotted prefix, so it would take the done.state events its final states raise too: rename the event")
			}
		}
	}
	for _, fns := range [][]*fsm.Func{c.m.Guards, c.m.Effects} {
		for _, fn := range fns {
			if fn.Used() && slices.Contains(strings.Fields(ecmaReserved), fn.Name) {
				w.p.refuse(fn.Pos, "%s is a reserved word of ECMAScript, the SCXML document's data model, so cond and <script> cannot call it: rename it (go_name keeps its Go name)", fn.Name)
			}
		}
	}
	if len(c.root.triggers) > 0 {
		w.wrapper = c.m.Name
		if s, ok := w.stateNamed(c.m.Name); ok {
			w.p.refuse(s.Pos, "state %s has the machine's name, which the SCXML export gives the state around every state (it holds the \"*\" rows): rename the state or the machine", s.Name)
		}
	}
	w.b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	initial := c.root.initial.name
	if w.wrapper != "" {
		initial = w.wrapper
	}
	w.open(0, "scxml", false, "xmlns", scxmlNS, "xmlns:fsmgen", fsmgenNS, "version", "1.0", "name", c.m.Name, "datamodel", "ecmascript", "initial", initial)
	depth := 1
	if w.wrapper != "" {
		w.open(1, "state", false, "id", w.wrapper, "initial", c.root.initial.name)
		depth = 2
	}
	for _, ch := range c.root.children {
		w.state(depth, ch)
	}
	if w.wrapper != "" {
		w.triggers(2, c.root)
		w.close(1, "state")
	}
	w.close(0, "scxml")
	return w.b.Bytes(), w.p.list, nil
}

// ecmaReserved are the names a guard or an effect cannot have in the
// SCXML export: ECMAScript's reserved words and literals (ECMA-262
// §12.7.2), and SCXML's In() predicate (SCXML §5.9.1).
const ecmaReserved = `await break case catch class const continue debugger default delete do
	else enum export extends false finally for function if implements import in instanceof interface
	let new null package private protected public return static super switch this throw true try
	typeof var void while with yield arguments eval undefined NaN Infinity In`

// stateNamed finds a state by name.
func (w *scxmlWriter) stateNamed(name string) (*fsm.State, bool) {
	for _, n := range w.c.nodes() {
		if n.name == name {
			return n.state, true
		}
	}
	return nil, false
}

// state writes one state, its entry and exit, its children and its
// transitions.
func (w *scxmlWriter) state(depth int, n *node) {
	tag := "state"
	attrs := []string{"id", n.name}
	kind := n.kind
	if kind == Final && w.wrapper != "" && n.state.Parent == nil {
		// Inside the state around the machine a <final> would not end
		// the machine, and the "*" rows would still take events it
		// ignores: it stays a state, with its rules.
		kind = Atomic
	}
	switch kind {
	case History:
		// SCXML's <history>, whose transition is its default: the
		// composite state's initial child.
		w.open(depth, "history", false, "id", historyID(n.state), "type", n.history.String())
		w.open(depth+1, "transition", true, "target", historyDefault(n.state))
		w.close(depth, "history")
		return
	case Final:
		tag = "final"
	case Parallel:
		// Its children are its regions, all entered with it.
		tag = "parallel"
	case Compound:
		attrs = append(attrs, "initial", n.initial.name)
	case Atomic:
	default:
		w.p.refuse(n.state.Pos, "state %s is of a kind the SCXML export does not know", n.name)
	}
	empty := len(n.entry) == 0 && len(n.exit) == 0 && len(n.timers) == 0 && len(n.children) == 0 && (kind == Final || len(n.triggers) == 0)
	w.open(depth, tag, empty, attrs...)
	if empty {
		return
	}
	if len(n.entry) > 0 || len(n.timers) > 0 {
		w.open(depth+1, "onentry", false)
		w.calls(depth+2, n.entry)
		for _, t := range n.timers {
			delay := []string{"delay", strconv.FormatInt(t.Delay/int64(time.Millisecond), 10) + "ms"}
			if t.DelayFunc != nil {
				delay = []string{"delayexpr", t.DelayFunc.Name + "(_event)"}
			} else if t.Delay%int64(time.Millisecond) != 0 {
				w.p.refuse(t.Pos, "%s waits %s, not a whole number of milliseconds: the SCXML export writes delays in milliseconds", t.Name(), time.Duration(t.Delay))
			}
			w.open(depth+2, "send", true, append([]string{"id", sendID(t), "event", timerEvent(t)}, delay...)...)
		}
		w.close(depth+1, "onentry")
	}
	if len(n.exit) > 0 || len(n.timers) > 0 {
		w.open(depth+1, "onexit", false)
		for _, t := range n.timers {
			w.open(depth+2, "cancel", true, "sendid", sendID(t))
		}
		w.calls(depth+2, n.exit)
		w.close(depth+1, "onexit")
	}
	for _, ch := range n.children {
		w.state(depth+1, ch)
	}
	if kind != Final {
		w.triggers(depth+1, n)
	}
	w.close(depth, tag)
}

// sendID is the id of the <send> that runs a timer, which its state's
// exit cancels: "TimeWait.timer", "AwaitingPayment.timer.reminder".
func sendID(t *fsm.Timer) string {
	if t.ID == "" {
		return t.State.Name + ".timer"
	}
	return t.State.Name + ".timer." + t.ID
}

// timerEvent is the event a timer sends itself: fsmgen.timer.STATE.N, N
// the timer's place among its state's timers (numbers, so that no
// timer's event is a dotted prefix of another's).
func timerEvent(t *fsm.Timer) string {
	return "fsmgen.timer." + t.State.Name + "." + strconv.Itoa(t.Place)
}

// triggers writes a node's transitions: by event, then the timers, then
// the eventless ones, each trigger's branches in order.
func (w *scxmlWriter) triggers(depth int, n *node) {
	for _, t := range n.triggers {
		for _, r := range t.branches {
			w.transition(depth, n, t, r)
		}
	}
}

// transition writes one rule as a <transition>.
func (w *scxmlWriter) transition(depth int, n *node, t *trigger, r *fsm.Rule) {
	var attrs []string
	switch {
	case t.timer != nil:
		attrs = append(attrs, "event", timerEvent(t.timer))
		if t.timer.ID != "" {
			attrs = append(attrs, "fsmgen:timer", t.timer.ID)
		}
	case t.done:
		attrs = append(attrs, "event", "done.state."+n.name)
	case t.event != nil:
		attrs = append(attrs, "event", t.event.Name)
	}
	switch {
	case r.Source != nil && r.ShownGuard() == nil:
		// A rule that leaves a parallel state from inside a region: the
		// transition of its source, which says where it is (one with a
		// guard of its own tests that guard, below).
	case r.Guard != nil && r.Guard.In != nil:
		// SCXML's own predicate (§5.9.1), true while the state is active.
		attrs = append(attrs, "cond", "In('"+r.Guard.In.Name+"')")
	case r.Guard != nil:
		attrs = append(attrs, "cond", r.Guard.Name+"(_event)")
	}
	if r.History != nil {
		attrs = append(attrs, "target", historyID(r.History))
		rootRule(r, &w.p, "SCXML")
		if n == w.c.root {
			attrs = append(attrs, "type", "internal")
		}
		acrossRule(r, &w.p, "SCION")
	} else if r.Target != nil {
		attrs = append(attrs, "target", r.Target.Name)
		if rootRule(r, &w.p, "SCXML") || r.Local || n == w.c.root {
			attrs = append(attrs, "type", "internal")
		}
		acrossRule(r, &w.p, "SCION")
	}
	if r.Kind == fsm.Reject {
		attrs = append(attrs, "fsmgen:reject", r.Reason)
	}
	set, with := dataMarks(r, &w.p, "SCXML")
	timerReads(r, &w.p, "SCXML")
	if set != nil {
		attrs = append(attrs, "fsmgen:set", strings.Join(set, " "))
	}
	if with != nil {
		attrs = append(attrs, "fsmgen:with", strings.Join(with, " "))
	}
	if set != nil || with != nil {
		attrs = append(attrs, "fsmgen:at", at(w.c.m, r.Pos))
	}
	calls := ruleCalls(r)
	w.open(depth, "transition", len(calls) == 0, attrs...)
	if len(calls) > 0 {
		w.calls(depth+1, calls)
		w.close(depth, "transition")
	}
}

// calls writes effects as <script> calling the effect with the event, and
// actions as events sent to the session that runs the machine.
func (w *scxmlWriter) calls(depth int, calls []call) {
	for _, c := range calls {
		if c.effect {
			w.indent(depth)
			w.b.WriteString("<script>")
			w.text(c.name + "(_event)")
			w.b.WriteString("</script>\n")
			continue
		}
		w.open(depth, "send", true, "target", "#_parent", "event", c.name)
	}
}

// open writes a start tag with attrs (name, value pairs), or an empty
// element when empty is set.
func (w *scxmlWriter) open(depth int, tag string, empty bool, attrs ...string) {
	w.indent(depth)
	w.b.WriteString("<" + tag)
	for i := 0; i+1 < len(attrs); i += 2 {
		fmt.Fprintf(&w.b, " %s=\"", attrs[i])
		w.attr(attrs[i+1])
		w.b.WriteByte('"')
	}
	if empty {
		w.b.WriteString("/>\n")
		return
	}
	w.b.WriteString(">\n")
}

func (w *scxmlWriter) close(depth int, tag string) {
	w.indent(depth)
	w.b.WriteString("</" + tag + ">\n")
}

func (w *scxmlWriter) indent(depth int) { w.b.WriteString(strings.Repeat("  ", depth)) }

// text writes s escaped for XML text and attribute values.
func (w *scxmlWriter) text(s string) { _ = xml.EscapeText(&w.b, []byte(s)) }

// attr writes s escaped for an attribute value between double quotes,
// where an apostrophe needs no escape: cond="In('Online')".
func (w *scxmlWriter) attr(s string) {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	w.b.WriteString(strings.ReplaceAll(b.String(), "&#39;", "'"))
}

// historyID is the SCXML id of a composite state's history: its name and
// .history (state names have no dots, so no state has it).
func historyID(s *fsm.State) string { return s.Name + ".history" }

// historyDefault is the target of the default transition of the history
// of s: its initial child or, for a parallel state, its regions, all
// entered through their initial states (SCXML 1.0 §3.10: the default
// transition's targets are descendants of the history's parent).
func historyDefault(s *fsm.State) string {
	if s.Regions == nil {
		return s.InitialChild.Name
	}
	var names []string
	for _, reg := range s.Regions {
		names = append(names, reg.Root.Name)
	}
	return strings.Join(names, " ")
}

// rememberedBy returns the regions whose leaves deep history h remembers
// (see fsm.Memory), in memory order.
func rememberedBy(m *fsm.Machine, h *fsm.State) []*fsm.Region {
	var out []*fsm.Region
	for _, mem := range m.Memories {
		if mem.History == h {
			out = append(out, mem.Region)
		}
	}
	return out
}

// scxmlDeepFinal refuses a deep history that may remember a final state:
// one whose done transition leaves the history's state, the final state
// of a region of a parallel state the history holds, or a final state
// such a region may rest in (its composite state's done transition
// without else) or hold while the parallel state's own eventless rule
// leaves it (fsm.Recalls), or, for the history of a region's own state,
// the region's final state. SCXML records
// every atomic state a deep history's state is left from, a <final>
// among them (SCXML 1.0 §3.10, and Appendix D's exitStates), and so does
// fsmgen, as XState v5 does; SCION, the SCXML interpreter the export is
// checked against, records only its plain atomic states and leaves the
// final state out, so resuming the history enters nothing there.
func scxmlDeepFinal(c *chart, p *problems) {
	for _, h := range c.m.Histories {
		if h.History != fsm.HistoryDeep {
			continue
		}
		for _, reg := range rememberedBy(c.m, h) {
			if len(reg.Finals) > 0 {
				p.refuse(h.Pos, "the deep history of %s remembers the leaf of region %s of %s, which may be its final state %s: SCXML records a final state in a deep history (SCXML 1.0 §3.10, exitStates), but SCION, the SCXML interpreter the export is checked against, records only the other atomic states and would resume the region through its initial state: make the history of %s shallow (a composite state's) or drop it, or end region %s in a state that is not final", h.Name, reg.Root.Name, reg.Owner().Name, reg.Finals[0].Name, h.Name, reg.Root.Name)
				break
			}
			if i := slices.IndexFunc(reg.Leaves, func(l *fsm.State) bool { return l.Completes != nil && fsm.Recalls(h, l) }); i >= 0 {
				f := reg.Leaves[i]
				how := "whose done event waits when the eventless rule of " + reg.Parallel.Name + " leaves it"
				if f.Choice != nil && slices.ContainsFunc(f.Choice.Rules, func(r *fsm.Rule) bool { return r.Leaves != nil }) {
					how = "from which the done transition of " + f.Completes.Name + " leaves " + reg.Parallel.Name
				}
				p.refuse(h.Pos, "the deep history of %s remembers the leaf of region %s of %s, which may be final state %s, %s: SCXML records a final state in a deep history (SCXML 1.0 §3.10, exitStates), and resuming it raises that done event again, but SCION, the SCXML interpreter the export is checked against, records only the other atomic states and would resume the region through its initial state: make the history of %s shallow (a composite state's) or drop it", h.Name, reg.Root.Name, reg.Owner().Name, f.Name, how, h.Name)
				break
			}
			if i := slices.IndexFunc(reg.Leaves, (*fsm.State).Rests); i >= 0 {
				f := reg.Leaves[i]
				p.refuse(h.Pos, "the deep history of %s remembers the leaf of region %s of %s, which may be final state %s, resting there when no guard of the done transition of %s held: SCXML records a final state in a deep history (SCXML 1.0 §3.10, exitStates), and resuming it raises that done event again, but SCION, the SCXML interpreter the export is checked against, records only the other atomic states and would resume the region through its initial state: make the history of %s shallow (a composite state's) or drop it, or end the guards of the done transition of %s with \"- else: true\"", h.Name, reg.Root.Name, reg.Owner().Name, f.Name, f.Completes.Name, h.Name, f.Completes.Name)
				break
			}
		}
	}
	for _, r := range c.m.AllRules() { // a region's rules too (a history inside the region)
		if r.History == nil || r.History.History != fsm.HistoryDeep || r.Resume != nil {
			continue
		}
		for _, v := range r.Variants {
			if f := v.Resume; f.Region != nil && slices.Contains(f.Region.Finals, f) {
				p.refuse(r.Pos, "rule %s may resume final state %s of region %s, which the deep history of %s remembers when the machine leaves %s from it: SCXML records a final state in a deep history (SCXML 1.0 §3.10, exitStates), but SCION, the SCXML interpreter the export is checked against, records only its other atomic states and would resume nothing: make the history of %s shallow", r.Label, f.Name, f.Region.Root.Name, r.History.Name, r.History.Name, r.History.Name)
				break
			}
			if f := v.Resume; f.Rests() {
				p.refuse(r.Pos, "rule %s may resume final state %s, which the deep history of %s remembers when the machine leaves %s from it, resting there when no guard of the done transition of %s held: SCXML records a final state in a deep history (SCXML 1.0 §3.10, exitStates), but SCION, the SCXML interpreter the export is checked against, records only its other atomic states and would resume nothing: make the history of %s shallow", r.Label, f.Name, r.History.Name, r.History.Name, f.Completes.Name, r.History.Name)
				break
			}
			if f := v.Resume; f.Completes != nil {
				p.refuse(r.Pos, "rule %s may resume final state %s, which the deep history of %s remembers when the done transition of %s leaves %s from it: SCXML records a final state in a deep history (SCXML 1.0 §3.10, exitStates), but SCION, the SCXML interpreter the export is checked against, records only its other atomic states and would resume nothing: make the history of %s shallow, or lead the done transition of %s to a state inside %s", r.Label, f.Name, r.History.Name, f.Completes.Name, r.History.Name, r.History.Name, f.Completes.Name, r.History.Name)
				break
			}
		}
	}
}
