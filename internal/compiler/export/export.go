// Package export writes a checked machine as a chart that other
// statechart tools read: an XState v5 machine config (JSON) or a W3C
// SCXML document. Both carry the same chart: the states and their
// nesting, the transitions with their guards, effects and actions by
// name, entry and exit, transient states, timers and final states.
//
// What a target cannot say is never dropped without a word: a construct
// with no exact counterpart is refused (an error, and no output), or kept
// where the target has room for it (XState's meta, an SCXML comment) and
// reported as a warning naming it and its position in the spec.
// docs/export.md describes the mapping.
package export

import (
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// Format is a target of the export.
type Format string

// The formats.
const (
	XState Format = "xstate"
	SCXML  Format = "scxml"
)

// Formats are the formats Export writes.
var Formats = []Format{XState, SCXML}

// The rules of the export's diagnostics.
const (
	// RuleRefused is the rule of an error: the target cannot express a
	// construct of the spec, so nothing is written.
	RuleRefused = "export-refused"
	// RuleKept is the rule of a warning: the target runs no equivalent of
	// a construct, which the output keeps as metadata.
	RuleKept = "export-kept-as-metadata"
)

// Export writes m in format f. The diagnostics say what the target
// cannot express: with an error among them the output is nil; warnings
// name what the output keeps as metadata only.
func Export(m *fsm.Machine, f Format) ([]byte, diag.List, error) {
	if m == nil || m.Initial == nil {
		return nil, nil, fmt.Errorf("export: the machine is not checked: fix the spec's errors first")
	}
	c := build(m)
	var (
		out   []byte
		diags diag.List
		err   error
	)
	switch f {
	case XState:
		out, diags, err = writeXState(c)
	case SCXML:
		out, diags, err = writeSCXML(c)
	default:
		return nil, nil, fmt.Errorf("export: unknown format %q: use one of %s", f, formatList())
	}
	if err != nil {
		return nil, nil, err
	}
	diags.Sort()
	if diags.HasErrors() {
		return nil, diags, nil
	}
	return out, diags, nil
}

// formatList names the formats for messages: "xstate, scxml".
func formatList() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// problems collects an export's diagnostics.
type problems struct{ list diag.List }

// refuse adds an error: the target cannot express what is at pos.
func (p *problems) refuse(pos diag.Pos, format string, args ...any) {
	p.list = append(p.list, diag.Diagnostic{Pos: pos, Severity: diag.Error, Rule: RuleRefused, Msg: fmt.Sprintf(format, args...)})
}

// keep adds a warning: the target keeps what is at pos as metadata only.
func (p *problems) keep(pos diag.Pos, format string, args ...any) {
	p.list = append(p.list, diag.Diagnostic{Pos: pos, Severity: diag.Warning, Rule: RuleKept, Msg: fmt.Sprintf(format, args...)})
}

// common checks what neither target can express, and names clashes the
// targets would not tell apart.
func common(c *chart, p *problems, target string) {
	m := c.m
	actions := map[string]bool{}
	for _, a := range m.Actions {
		actions[a.Name] = true
	}
	for _, fn := range m.Effects {
		if fn.Used() && actions[fn.Name] {
			p.refuse(fn.Pos, "effect %s has the name of an action: %s names both alike, so rename one of them", fn.Name, target)
		}
	}
	// Neither target keeps events for later: a deferral has no
	// counterpart (UML's deferrable triggers; see docs/export.md).
	for _, r := range m.AllRules() {
		if r.Kind == fsm.Defer {
			from := r.Owner()
			p.refuse(r.Pos, "state %s defers %s: %s has no deferred events, so it cannot keep %s for a later state; remove the deferral (ignore or handle %s in %s) to export the machine", from.Name, r.Event.Name, target, r.Event.Name, r.Event.Name, from.Name)
		}
	}
	// A region's rejection refuses the event for the whole machine in
	// fsmgen; in the targets it is a transition that does nothing, beside
	// the other regions' (see parallel.go).
	regionRejects(c, p, target)
	// A history is written as a child of its composite state named
	// history (XState's states key, the id's last part).
	for _, s := range m.Histories {
		for _, ch := range s.Children {
			if ch.Name == historyKey {
				p.refuse(ch.Pos, "state %s has the name the export gives the history of %s: rename it", ch.Name, s.Name)
			}
		}
	}
}

// dataMarks reports the data effects of a rule that the target does not
// run (set:, with:), and returns them as text: "retries=0".
func dataMarks(r *fsm.Rule, p *problems, target string) (set, with []string) {
	for _, k := range r.Consts {
		set = append(set, k.String())
		p.keep(k.Pos, "set: %s is kept as metadata only: %s holds none of fsmgen's fields", k.String(), target)
	}
	for _, bd := range r.With {
		with = append(with, bd.String())
		p.keep(bd.Pos, "with: %s is kept as metadata only: %s holds none of fsmgen's fields", bd.String(), target)
	}
	return set, with
}

// timerReads warns about what a timer's rule reads of its event
// (TimerFired's deadline and now): the targets' timer events carry none
// of it, so the guard or effect that reads it has to find it elsewhere
// (the target's clock).
func timerReads(r *fsm.Rule, p *problems, target string) {
	if r.Timer == nil {
		return
	}
	for _, use := range []struct {
		fn   *fsm.Func
		args []fsm.Value
	}{{r.Guard, r.GuardArgs}, {r.Effect, r.EffectArgs}} {
		for _, v := range use.args {
			if v.Source == fsm.FromEvent && v.Field != nil {
				p.keep(r.Pos, "%s reads %s of the timer's event, which %s's timer events do not carry: its implementation there must find it elsewhere", use.fn.Name, v.Field.Name, target)
			}
		}
	}
}

// at is a position as the output names it: the spec's file name (no
// directories), line and column.
func at(m *fsm.Machine, pos diag.Pos) string {
	return diag.Pos{File: m.SpecFile, Line: pos.Line, Col: pos.Col}.String()
}
