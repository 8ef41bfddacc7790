package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// easelMain drives the easel of the export's chart (the entries and exits
// of the states of Editing's regions, Editing a parallel state inside
// region Work, run effects on Run's field level and hand out Note with
// it): each effect logs its name and what it read and adds one, and the
// program prints, after each step, the effects run, the actions handed
// out and the state; then what Load runs (nothing: it enters no state).
const easelMain = `package main

import (
	"fmt"
	"strings"

	"example.com/m/easel"
)

var log []string

type behavior struct{}

func run(name string, level int) int {
	log = append(log, fmt.Sprintf("%s(%d)", name, level))
	return level + 1
}

func (behavior) High(level int) bool { return level >= 12 }
func (behavior) Open(level int) int  { return run("open", level) }
func (behavior) Shut(level int) int  { return run("shut", level) }
func (behavior) Warm(level int) int  { return run("warm", level) }
func (behavior) Cool(level int) int  { return run("cool", level) }
func (behavior) Seal(level int) int  { return run("seal", level) }
func (behavior) Hush(level int) int  { return run("hush", level) }
func (behavior) Tint(level int) int  { return run("tint", level) }
func (behavior) Fade(level int) int  { return run("fade", level) }
func (behavior) Lift(level int) int  { return run("lift", level) }
func (behavior) Dip(level int) int   { return run("dip", level) }

func main() {
	rec := &easel.Recorder{}
	c := easel.Config{Behavior: behavior{}, Handler: rec}
	m, err := easel.New(c)
	if err != nil {
		panic(err)
	}
	step := func(ev easel.Event) {
		rec.Actions, log = nil, nil
		if err := m.HandleEvent(ev); err != nil {
			panic(err)
		}
		var acts []string
		for _, a := range rec.Actions {
			switch a := a.(type) {
			case *easel.Note:
				acts = append(acts, fmt.Sprintf("Note%d", a.Level))
			default:
				acts = append(acts, fmt.Sprintf("%T", a)[7:])
			}
		}
		fmt.Printf("%s: %s | %s -> %+v\n", fmt.Sprintf("%T", ev)[7:], strings.Join(log, " "), strings.Join(acts, " "), m.State())
	}
	for _, ev := range []easel.Event{&easel.Go{}, &easel.Edit{}, &easel.Link{}, &easel.Save{}, &easel.Show{}, &easel.TimerFired{Timer: 1}, &easel.Show{}} {
		step(ev)
	}
	data, err := m.Save()
	if err != nil {
		panic(err)
	}
	log = nil
	loaded, err := easel.Load(c, data)
	if err != nil {
		panic(err)
	}
	fmt.Printf("loaded: [%s] %+v\n", strings.Join(log, " "), loaded.State())
	for _, ev := range []easel.Event{&easel.Finish{}, &easel.Show{}, &easel.Edit{}, &easel.Close{}, &easel.Edit{}, &easel.Stop{}} {
		step(ev)
	}
}
`

// TestHostedFieldsRun generates the export's chart of a parallel state
// inside a region whose regions' states run effects on entry and exit
// (testdata/charts/easel) and runs it with a real Behavior: each effect
// reads what the one before it set, in SCXML 1.0 §3.13's order (exits
// innermost first in reverse document order, then entries in document
// order), and Note hands out the level its entry or exit computed, or
// read, in place, as Work's rule enters Editing, as Text's rule, its
// transient state, Preview's timer and Preview's and Net's rules for one
// event move within their regions, as Editing's done transition and its
// own rule leave it, and as Run's rule leaves Run; Load runs none.
func TestHostedFieldsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	t.Parallel()
	dir := tempModule(t)
	generateIn(t, dir, "easel", chartSpec(t, "easel"), map[string]string{"cmd/easel/main.go": easelMain})
	out := goIn(t, dir, "run", "./cmd/easel")
	for _, want := range []string{
		"Go:  |  -> {Level:1 Work:Browse Text:StateKind(0) Preview:StateKind(0) Net:Offline}",
		// Editing's entry, then Typing's, then Hidden's.
		"Edit: open(1) warm(2) hush(3) | Note2 Note3 -> {Level:4 Work:Editing Text:Typing Preview:Hidden Net:Offline}",
		"Link: lift(4) | Note5 -> {Level:5 Work:Editing Text:Typing Preview:Hidden Net:Online}",
		// Typing's exit, then Check's eventless rule (high(6) fails) enters Saved.
		"Save: cool(5) | Note6 Note6 -> {Level:6 Work:Editing Text:Saved Preview:Hidden Net:Online}",
		// Net's exit, then Preview's (reverse document order), then Shown's entry.
		"Show: dip(6) tint(7) | Note7 Note7 Note8 StartTimer -> {Level:8 Work:Editing Text:Saved Preview:Shown Net:Offline}",
		"TimerFired: fade(8) hush(9) |  -> {Level:10 Work:Editing Text:Saved Preview:Hidden Net:Offline}",
		"Show: tint(10) | Note10 Note11 StartTimer -> {Level:11 Work:Editing Text:Saved Preview:Shown Net:Offline}",
		"loaded: [] {Level:11 Work:Editing Text:Saved Preview:Shown Net:Offline}",
		"Finish: cool(11) seal(12) | Note13 -> {Level:13 Work:Editing Text:Done Preview:Shown Net:Offline}",
		// Closed's entry ends Editing's last region: its done transition
		// leaves it in the same step (shut).
		"Show: fade(13) seal(14) shut(15) | CancelTimer Note15 Note16 Framed -> {Level:16 Work:Browse Text:StateKind(0) Preview:StateKind(0) Net:Offline}",
		"Edit: open(16) warm(17) hush(18) | Note17 Note18 -> {Level:19 Work:Editing Text:Typing Preview:Hidden Net:Offline}",
		// Hidden's exit reads level before Typing's exit sets it.
		"Close: cool(19) shut(20) | Note19 Note20 Note21 -> {Level:21 Work:Browse Text:StateKind(0) Preview:StateKind(0) Net:Offline}",
		"Edit: open(21) warm(22) hush(23) | Note22 Note23 -> {Level:24 Work:Editing Text:Typing Preview:Hidden Net:Offline}",
		"Stop: cool(24) shut(25) | Note24 Note25 Note26 -> {}",
	} {
		assert.Contains(t, out, want)
	}
}
