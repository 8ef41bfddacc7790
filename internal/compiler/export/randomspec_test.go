package export_test

import (
	"fmt"
	"strings"
)

// This file writes a random chart (see randomchart_test.go) as an fsmgen
// spec.

// spec writes the chart as an fsmgen spec, declaring what its rows use.
func (g *chartGen) spec() string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 2\nmachine: %s\npackage: %s\noutput:\n  go: .\nstates:\n", g.name, strings.ToLower(g.name))
	var actions []string
	for i, s := range g.top {
		actions = g.writeNode(&b, s, "  ", i == 0, actions)
	}
	b.WriteString("events:\n")
	for _, e := range g.events {
		fmt.Fprintf(&b, "  %s: {}\n", e)
	}
	rows := strings.Join(g.rows, "")
	used := rows // and the done transitions' guards and actions, and the timers'
	for _, n := range g.nodes() {
		for _, a := range n.doneIf {
			used += doneArm(a, "")
		}
		if n.timerAction != "" {
			used += "action: " + n.timerAction + "\n"
		}
	}
	for _, a := range g.actions {
		if strings.Contains(used, "action: "+a+"\n") {
			actions = append(actions, a)
		}
	}
	writeTail(&b, actions, g.guards, used, rows)
	return b.String()
}

// writeTail ends a random chart's spec: its actions, the guards of
// guards that used tests (a rule not drawn leaves its guards unused),
// and its transitions, rows.
func writeTail(b *strings.Builder, actions, guards []string, used, rows string) {
	if len(actions) > 0 {
		b.WriteString("actions:\n")
		for _, a := range actions {
			fmt.Fprintf(b, "  %s: {}\n", a)
		}
	}
	var named []string
	for _, gd := range guards {
		if strings.Contains(used, "if: "+gd+"\n") || strings.Contains(used, "if: \""+gd+"\"\n") {
			named = append(named, gd)
		}
	}
	if len(named) > 0 {
		b.WriteString("guards:\n")
		for _, gd := range named {
			fmt.Fprintf(b, "  %s: {}\n", gd)
		}
	}
	b.WriteString("transitions:\n")
	b.WriteString(rows)
}

// doneArm writes an outcome of a done transition's guards, its lines
// indented by indent.
func doneArm(a arm, indent string) string {
	s := fmt.Sprintf("%s- if: %s\n%s  to: %s\n", indent, a.guard, indent, a.to)
	if a.guard == "" {
		s = fmt.Sprintf("%s- else: true\n%s  to: %s\n", indent, indent, a.to)
	}
	if a.action != "" {
		s += fmt.Sprintf("%s  action: %s\n", indent, a.action)
	}
	return s
}

// writeNode writes state n and the states inside it, and returns the
// actions with its entry and exit added.
func (g *chartGen) writeNode(b *strings.Builder, n *rnode, indent string, initial bool, actions []string) []string {
	in := indent + "  "
	var lines []string
	if initial && n.kind != regionNode {
		lines = append(lines, "initial: true")
	}
	if n.final {
		lines = append(lines, "final: true")
	}
	if n.transient {
		lines = append(lines, "transient: true")
	}
	if n.kind == parallelNode {
		lines = append(lines, "parallel: true")
	}
	if n.history != "" {
		lines = append(lines, "history: "+n.history)
	}
	if n.entry {
		lines = append(lines, "entry: "+n.name+"In")
		actions = append(actions, n.name+"In")
	}
	if n.exit {
		lines = append(lines, "exit: "+n.name+"Out")
		actions = append(actions, n.name+"Out")
	}
	if n.parent == nil && g.star == "" {
		lines = append(lines, `ignore: "*"`)
	} else if n.parent == nil {
		// What it has no row for, but the "*" row's event.
		var ignore []string
		for _, e := range g.events {
			if e != g.star && !g.taken[n.name+" "+e] {
				ignore = append(ignore, e)
			}
		}
		if len(ignore) > 0 {
			lines = append(lines, "ignore: ["+strings.Join(ignore, ", ")+"]")
		}
	}
	if len(n.ignore) > 0 {
		lines = append(lines, "ignore: ["+strings.Join(n.ignore, ", ")+"]")
	}
	if len(n.reject) > 0 {
		lines = append(lines, "reject: ["+strings.Join(n.reject, ", ")+"]")
	}
	if n.timer != "" {
		lines = append(lines, fmt.Sprintf("after: {delay: %ds, to: %s}", n.delay, n.timer))
	}
	if n.timerAction != "" {
		lines = append(lines, fmt.Sprintf("after: {delay: %ds, action: %s}", n.delay, n.timerAction))
	}
	if n.done != "" {
		lines = append(lines, "done: {to: "+n.done+"}")
	}
	if len(n.doneIf) > 0 {
		d := "done:\n" + in + "  guards:\n"
		for _, a := range n.doneIf {
			d += doneArm(a, in+"    ")
		}
		lines = append(lines, strings.TrimSuffix(d, "\n"))
	}
	if len(lines) == 0 && len(n.children) == 0 {
		fmt.Fprintf(b, "%s%s: {}\n", indent, n.name)
		return actions
	}
	fmt.Fprintf(b, "%s%s:\n", indent, n.name)
	for _, l := range lines {
		b.WriteString(in + l + "\n")
	}
	if len(n.children) > 0 {
		b.WriteString(in + "states:\n")
		for i, c := range n.children {
			actions = g.writeNode(b, c, in+"  ", i == 0 && n.kind != parallelNode, actions)
		}
	}
	return actions
}
