package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// pressMain drives the press of the export's chart (done transitions of
// composite states inside regions): it prints the actions of each step,
// and what Restore and Load say of a region in a final state whose
// composite state's done transition leaves it at once.
const pressMain = `package main

import (
	"fmt"
	"strings"

	"example.com/m/press"
)

type jam bool

func (j jam) Jammed() bool { return bool(j) }

func run(jammed bool, events ...press.Event) *press.Machine {
	rec := &press.Recorder{}
	m, err := press.New(press.Config{Behavior: jam(jammed), Handler: rec})
	if err != nil {
		panic(err)
	}
	for _, ev := range events {
		rec.Actions = nil
		if err := m.HandleEvent(ev); err != nil {
			panic(err)
		}
		var kinds []string
		for _, a := range rec.Actions {
			kinds = append(kinds, a.Kind().String())
		}
		fmt.Printf("%T: %v -> %+v\n", ev, kinds, m.State())
	}
	return m
}

func main() {
	run(false, &press.Go{}, &press.Chill{}, &press.Bake{})
	run(true, &press.Go{}, &press.Grab{}, &press.Clear{})
	c := press.Config{Behavior: jam(false), Handler: &press.Recorder{}}
	_, err := press.Restore(c, press.Run{Feed: press.StatePulled, Cool: press.StateHot})
	fmt.Println("restore:", err)
	data, err := run(false, &press.Go{}, &press.Chill{}).Save()
	if err != nil {
		panic(err)
	}
	fmt.Println("saved:", string(data))
	_, err = press.Load(c, []byte(strings.Replace(string(data), ` + "`" + `"feed":"wet"` + "`" + `, ` + "`" + `"feed":"dried"` + "`" + `, 1)))
	fmt.Println("load:", err)
}
`

// TestRegionDoneRuns generates the export's chart of done transitions
// inside regions (testdata/charts/press) and runs it: a rule that enters
// a final state of a composite state inside a region takes the composite
// state's done transition in the same step (exits innermost first, its
// actions, the target's entries), several regions' in document order,
// one leading to the next (Inking's done into Inked, Printing's final
// state), and the last region to end completes the parallel state, whose
// done follows. Restore and Load refuse a region in such a final state.
func TestRegionDoneRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	generateIn(t, dir, "press", chartSpec(t, "press"), map[string]string{"cmd/press/main.go": pressMain})
	out := goIn(t, dir, "run", "./cmd/press")
	for _, want := range []string{
		"*press.Go: [IdleOut RunIn FeedIn LoadIn PullIn CoolIn FanIn HeatIn StartTimer] -> {Feed:Pulling Cool:Hot}",
		// Both regions take Chill: Pulling and Hot are left (in reverse
		// document order), then Loading's done (not jammed: to Printing)
		// and Warm's (to Chilled), in document order.
		"*press.Chill: [CancelTimer HeatOut PullOut LoadOut Loaded InkIn WetIn DripIn FanOut FanOff ChillIn] -> {Feed:Wet Cool:Chilled}",
		// Bake completes Inking, whose done enters Inked and completes
		// Printing, whose done ends Feed in Printed: every region is
		// final, and Run's done leaves it (the regions in reverse
		// document order).
		"*press.Bake: [DripOut WetOut Dry InkOut Stack EjectIn ChillOut CoolOut EjectOut FeedOut RunOut Report IdleIn] -> {}",
		"*press.Grab: [PullOut LoadOut Alarm JamIn] -> {Feed:Stuck Cool:Hot}",
		"*press.Clear: [JamOut LoadIn PullIn] -> {Feed:Pulling Cool:Hot}",
		"restore: press: cannot restore Run: its region Feed is in Pulled, a final state whose composite state takes its done transition at once: the machine never rests there",
		`"state":{"kind":"run","feed":"wet","cool":"chilled"}`,
	} {
		assert.Contains(t, out, want)
	}
	assert.Regexp(t, `load: .*cannot restore Run: its region Feed is in Dried, a final state whose composite state takes its done transition at once`, out)
}
