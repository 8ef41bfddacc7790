package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// model answers the questions translating a script asks of a machine.
type model struct {
	m *fsm.Machine
}

func newModel(m *fsm.Machine) *model { return &model{m: m} }

// action returns the first action (builtin ones included) match accepts.
func (mdl *model) action(match func(*fsm.Action) bool) *fsm.Action {
	for _, a := range mdl.m.Actions {
		if match(a) {
			return a
		}
	}
	return nil
}

// fn returns the guard or effect of the given name that the machine
// calls, or nil.
func (mdl *model) fn(name string) *fsm.Func {
	for _, fns := range [][]*fsm.Func{mdl.m.Guards, mdl.m.Effects} {
		for _, fn := range fns {
			if fn.Name == name && fn.Used() {
				return fn
			}
		}
	}
	return nil
}

// leaf returns the first leaf state match accepts.
func (mdl *model) leaf(match func(*fsm.State) bool) *fsm.State {
	for _, s := range mdl.m.States {
		if match(s) {
			return s
		}
	}
	return nil
}

// translate turns a script line into an operation or a check.
func (mdl *model) translate(l scriptLine) (step, error) {
	s := step{line: l}
	m := mdl.m
	switch l.verb {
	case "new":
		data, err := withKind(m.Initial.Snake, l.arg)
		s.op = &op{Op: "new", Data: data}
		return s, err
	case "restore", "send":
		name, fields, _ := strings.Cut(l.arg, " ")
		var kind string
		if l.verb == "restore" {
			st := mdl.leaf(func(st *fsm.State) bool { return st.Name == name })
			if st == nil {
				return s, fmt.Errorf("restore %s: no such leaf state", name)
			}
			kind = st.Snake
		} else {
			i := slices.IndexFunc(m.Events, func(e *fsm.Event) bool { return e.Name == name })
			if i < 0 {
				return s, fmt.Errorf("send %s: no such event", name)
			}
			kind = m.Events[i].Snake
		}
		data, err := withKind(kind, fields)
		s.op = &op{Op: l.verb, Data: data}
		return s, err
	case "fire":
		n, err := strconv.ParseUint(l.arg, 10, 64)
		if err != nil || m.TimerFired == nil {
			return s, errors.New("fire takes a timer id, and the machine must have timers")
		}
		data, err := json.Marshal(map[string]any{"kind": m.TimerFired.Snake, "timer": n})
		s.op = &op{Op: "send", Data: data}
		return s, err
	case "guard":
		name, answer, _ := strings.Cut(l.arg, " ")
		fn := mdl.fn(name)
		if fn == nil || fn.Kind != fsm.Guard || (answer != "true" && answer != "false") {
			return s, fmt.Errorf("guard takes a guard the machine calls and true or false")
		}
		s.op = &op{Op: "guard", Name: name, Answer: answer == "true"}
		return s, nil
	case "effect":
		name, rest, _ := strings.Cut(l.arg, " ")
		fn := mdl.fn(name)
		if fn == nil || fn.Kind != fsm.Effect {
			return s, fmt.Errorf("effect %s: the machine calls no such effect", name)
		}
		values, err := split(rest, ' ')
		if err != nil {
			return s, err
		}
		if len(values) != len(fn.Sets) {
			return s, fmt.Errorf("effect %s sets %d values (%s), the line gives %d", name, len(fn.Sets), fieldList(fn.Sets), len(values))
		}
		s.op = &op{Op: "effect", Name: name}
		for i, v := range values {
			raw, err := parseValue(fn.Sets[i].Type, v)
			if err != nil {
				return s, fmt.Errorf("effect %s, %s: %w", name, fn.Sets[i].Name, err)
			}
			s.op.Results = append(s.op.Results, raw)
		}
		return s, nil
	case "want actions", "want calls":
		what := strings.TrimPrefix(l.verb, "want ")
		items, err := parseItems(l.arg)
		if err != nil {
			return s, err
		}
		s.check = &check{what: what}
		for _, it := range items {
			var text string
			if what == "actions" {
				text, err = mdl.expectAction(it)
			} else {
				text, err = mdl.expectCall(it)
			}
			if err != nil {
				return s, err
			}
			s.check.items = append(s.check.items, text)
		}
		return s, nil
	case "want state":
		name, fields, _ := strings.Cut(l.arg, " ")
		if mdl.leaf(func(st *fsm.State) bool { return st.Name == name }) == nil {
			return s, fmt.Errorf("want state %s: no such leaf state (the machine is always in a leaf)", name)
		}
		s.check = &check{what: "state", state: name}
		if fields = strings.TrimSpace(fields); fields != "" {
			canon, err := canonical(json.RawMessage(fields))
			if err != nil || !strings.HasPrefix(canon, "{") {
				return s, fmt.Errorf("want state %s: the fields are a JSON object: %v", name, err)
			}
			s.check.fields = canon
		}
		return s, nil
	case "want timers":
		s.check = &check{what: "timers"}
		for _, t := range strings.Fields(l.arg) {
			id, delay, ok := strings.Cut(t, ":")
			n, err := strconv.ParseUint(id, 10, 64)
			d, err2 := time.ParseDuration(delay)
			if !ok || err != nil || err2 != nil {
				return s, fmt.Errorf("want timers lists ID:DELAY, as 1:3s; not %q", t)
			}
			s.check.items = append(s.check.items, timerText(n, d))
		}
		return s, nil
	case "want error":
		s.check = &check{what: "error"}
		if l.arg == "rejected" {
			s.check.rejected = true
			return s, nil
		}
		re, err := regexp.Compile(l.arg)
		s.check.re = re
		return s, err
	}
	return s, fmt.Errorf("unknown instruction %q (see doc.go)", l.verb)
}
