package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// obj is a JSON object whose keys keep the order they were added in, so
// that the config reads in spec order and is the same bytes every run.
type obj []member

type member struct {
	key string
	val any
}

func (o *obj) add(key string, val any) { *o = append(*o, member{key, val}) }

// MarshalJSON writes the members in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, mb := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(mb.key)
		if err != nil {
			return nil, err
		}
		v, err := marshal(mb.val)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without escaping <, > and &, which doc text
// holds.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// xstateWriter writes a chart as an XState v5 machine config.
type xstateWriter struct {
	c *chart
	p problems
}

// writeXState writes the chart as the JSON of an XState v5 machine config:
//
//	{"id": "Conn", "initial": "CLOSED", "states": {"CLOSED": {"on": {"OPEN": [
//	  {"guard": "passive", "target": "#Conn.Connection.AwaitingSyn.LISTEN", "actions": ["CreateTCB"]}, ...
func writeXState(c *chart) ([]byte, diag.List, error) {
	w := &xstateWriter{c: c}
	common(c, &w.p, "XState")
	waitOrder(c, &w.p)
	root := obj{}
	root.add("id", c.m.Name)
	if c.m.Doc != "" {
		root.add("description", c.m.Doc)
	}
	// An empty context, for the effects to assign what they compute.
	root.add("context", obj{})
	w.body(&root, c.root)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, nil, fmt.Errorf("export: write the XState config: %w", err)
	}
	return b.Bytes(), w.p.list, nil
}

// id is a node's XState id: the machine's id and the path, dotted.
func (w *xstateWriter) id(n *node) string {
	return strings.Join(append([]string{w.c.m.Name}, n.path...), ".")
}

// state writes the config of one state node.
func (w *xstateWriter) state(n *node) obj {
	o := obj{}
	if n.state.Doc != "" {
		o.add("description", n.state.Doc)
	}
	switch n.kind {
	case History:
		// XState's history state; its default is the composite state's
		// initial child, as fsmgen's.
		o.add("type", "history")
		o.add("history", n.history.String())
		if n.state.Regions == nil {
			o.add("target", "#"+w.id(w.c.byState[n.state.InitialChild]))
		}
		// A parallel state's history without a target enters the
		// parallel state, every region through its initial states.
		return o
	case Final:
		o.add("type", "final")
	case Parallel:
		// Its children are its regions, all entered with it: no initial.
		o.add("type", "parallel")
	case Atomic, Compound:
	default:
		w.p.refuse(n.state.Pos, "state %s is of a kind the XState export does not know", n.name)
	}
	if len(n.entry) > 0 {
		o.add("entry", names(n.entry))
	}
	if len(n.exit) > 0 {
		o.add("exit", names(n.exit))
	}
	w.body(&o, n)
	return o
}

// body writes what a node and the root have in common: initial child,
// children, then transitions by event, the timers and the eventless
// transitions.
func (w *xstateWriter) body(o *obj, n *node) {
	if n.initial != nil {
		o.add("initial", n.initial.name)
	}
	if len(n.children) > 0 {
		states := obj{}
		for _, ch := range n.children {
			states.add(ch.name, w.state(ch))
		}
		o.add("states", states)
	}
	if n.kind == Final {
		return // a final state takes no transitions; all it has ignores or rejects
	}
	on, after := obj{}, obj{}
	var always, onDone any
	delays := map[string]*fsm.Timer{}
	for _, t := range n.triggers {
		switch {
		case t.timer != nil:
			key := w.delay(t.timer)
			if prev := delays[key]; prev != nil {
				w.p.refuse(t.timer.Pos, "%s has the delay of %s (%s): XState's after keys a state's timers by their delay, so give them different delays or put one on a state around", t.timer.Name(), prev.Name(), key)
				continue
			}
			delays[key] = t.timer
			after.add(key, w.transitions(t))
		case t.done:
			onDone = w.transitions(t)
		case t.event == nil:
			always = w.transitions(t)
		default:
			on.add(t.event.Name, w.transitions(t))
		}
	}
	if len(on) > 0 {
		o.add("on", on)
	}
	if onDone != nil {
		o.add("onDone", onDone)
	}
	if len(after) > 0 {
		o.add("after", after)
	}
	if always != nil {
		o.add("always", always)
	}
}

// delay is a timer's key in after: its delay in milliseconds, or the name
// of the effect that computes it (a delay the implementation provides).
func (w *xstateWriter) delay(t *fsm.Timer) string {
	if t.DelayFunc != nil {
		return t.DelayFunc.Name
	}
	if t.Delay%int64(time.Millisecond) != 0 {
		w.p.refuse(t.Pos, "%s waits %s, not a whole number of milliseconds: XState's after counts milliseconds", t.Name(), time.Duration(t.Delay))
	}
	return strconv.FormatInt(t.Delay/int64(time.Millisecond), 10)
}

// transitions writes a trigger's branches: one transition object, or an
// array of them tried in order.
func (w *xstateWriter) transitions(t *trigger) any {
	if len(t.branches) == 1 {
		return w.transition(t.branches[0])
	}
	out := make([]obj, len(t.branches))
	for i, r := range t.branches {
		out[i] = w.transition(r)
	}
	return out
}

// transition writes one rule: {"guard", "target", "reenter", "actions",
// "meta"}. A rule that ignores or rejects its event is a transition with
// no target and no actions, which XState takes and does nothing with (so
// that no state around handles the event).
func (w *xstateWriter) transition(r *fsm.Rule) obj {
	o := obj{}
	switch {
	case r.Source != nil && r.ShownGuard() == nil:
		// A rule that leaves a parallel state from inside a region: the
		// transition of its source, which says where it is (one with a
		// guard of its own tests that guard, below).
	case r.Guard != nil && r.Guard.In != nil:
		// XState's stateIn is a built-in guard whose state is part of the
		// guard function; a JSON config can only name a guard, so In(S)
		// is a guard of its own name whose params say which state it
		// tests, for the implementation to provide as stateIn(stateValue).
		o.add("guard", obj{{"type", r.Guard.Name}, {"params", obj{{"stateValue", "#" + w.id(w.c.byState[r.Guard.In])}}}})
	case r.Guard != nil:
		o.add("guard", r.Guard.Name)
	}
	if r.History != nil {
		o.add("target", "#"+w.id(w.c.historyNode(r.History)))
		rootRule(r, &w.p, "XState")
		// SCXML leaves and enters up to the least state around the
		// source and the history (§3.13); XState resolves the history
		// first and goes up to the least state around the source and the
		// state it resumes. From inside the composite state, the two
		// agree only for a source one level down, and with reenter: the
		// history may resume the source itself, or a state inside it (a
		// composite source, a parallel state's regions), which XState
		// would then enter without leaving the source.
		if s := r.From; s != nil && s != r.History && r.History.Contains(s) {
			if s.Parent != r.History {
				w.p.refuse(r.Pos, "the transition from %s into %s.history: XState leaves and enters up to the state around %s and the state the history resumes, not the history itself, so from a state nested this deep in %s it would leave fewer states than fsmgen and SCXML do: write the row on %s or on a child of it", s.Name, r.History.Name, s.Name, r.History.Name, r.History.Name)
			}
			o.add("reenter", true)
		} else if reenters(r) {
			o.add("reenter", true)
		}
		acrossRule(r, &w.p, "XState")
	} else if r.Target != nil {
		o.add("target", "#"+w.id(w.c.byState[r.Target]))
		if local := rootRule(r, &w.p, "XState"); reenters(r) && !local {
			o.add("reenter", true)
		}
		acrossRule(r, &w.p, "XState")
	}
	if calls := ruleCalls(r); len(calls) > 0 {
		o.add("actions", names(calls))
	}
	meta := obj{}
	if r.Timer != nil && r.Timer.ID != "" {
		meta.add("timer", r.Timer.ID)
	}
	if r.Kind == fsm.Reject {
		meta.add("reject", r.Reason)
	}
	set, with := dataMarks(r, &w.p, "XState")
	timerReads(r, &w.p, "XState")
	if set != nil {
		meta.add("set", set)
	}
	if with != nil {
		meta.add("with", with)
	}
	if set != nil || with != nil {
		meta.add("at", at(w.c.m, r.Pos))
	}
	if len(meta) > 0 {
		o.add("meta", meta)
	}
	return o
}

// names lists the names of calls, as XState's actions name them.
func names(calls []call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.name
	}
	return out
}
