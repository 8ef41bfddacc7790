package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// sorterMain drives the sorter of the export's chart (transient states
// inside regions): it prints the actions of each step, and what Restore
// and Load say of a region in a transient state.
const sorterMain = `package main

import (
	"fmt"
	"strings"

	"example.com/m/sorter"
)

type heavy bool

func (h heavy) Heavy() bool { return bool(h) }

func run(h bool, events ...sorter.Event) *sorter.Machine {
	rec := &sorter.Recorder{}
	m, err := sorter.New(sorter.Config{Behavior: heavy(h), Handler: rec})
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
		fmt.Printf("%v %T: %v -> %+v\n", h, ev, kinds, m.State())
	}
	return m
}

func main() {
	run(false, &sorter.Go{}, &sorter.Feed{}, &sorter.Tick{})
	run(true, &sorter.Go{}, &sorter.Feed{})
	c := sorter.Config{Behavior: heavy(false), Handler: &sorter.Recorder{}}
	_, err := sorter.Restore(c, sorter.Run{Belt: sorter.StateRoute, Bin: sorter.StateEmpty})
	fmt.Println("restore:", err)
	data, err := run(false, &sorter.Go{}).Save()
	if err != nil {
		panic(err)
	}
	_, err = sorter.Load(c, []byte(strings.Replace(string(data), ` + "`" + `"bin":"empty"` + "`" + `, ` + "`" + `"bin":"weigh"` + "`" + `, 1)))
	fmt.Println("load:", err)
}
`

// TestRegionTransientRuns generates the export's chart of transient
// states inside regions (testdata/charts/sorter) and runs it: one event
// moves both regions into transient states, whose eventless rules are
// then taken together, as one microstep (SCXML 1.0 §3.13): their
// actions in document order, then their entries. Restore and Load refuse
// a region in a transient state.
func TestRegionTransientRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	t.Parallel()
	dir := tempModule(t)
	generateIn(t, dir, "sorter", chartSpec(t, "sorter"), map[string]string{"cmd/sorter/main.go": sorterMain})
	out := goIn(t, dir, "run", "./cmd/sorter")
	for _, want := range []string{
		"false *sorter.Go: [IdleOut RunIn BeltIn WaitIn BinIn EmptyIn] -> {Belt:Waiting Bin:Empty}",
		// Both regions take Feed (exits in reverse document order, then
		// Fed), each into a transient state: both choices follow as one
		// microstep, their actions, then their entries.
		"false *sorter.Feed: [EmptyOut WaitOut Fed GoLeft Light SortIn LeftIn EmptyIn] -> {Belt:Left Bin:Empty}",
		// Tick leaves Sorting for Route, whose choice enters it again.
		"false *sorter.Tick: [LeftOut SortOut GoLeft SortIn LeftIn] -> {Belt:Left Bin:Empty}",
		"true *sorter.Feed: [EmptyOut WaitOut Fed GoRight Loaded SortIn RightIn FullIn StartTimer] -> {Belt:Right Bin:Full}",
		"restore: sorter: cannot restore Run: its region Belt is in Route, a transient state: the machine never rests there",
	} {
		assert.Contains(t, out, want)
	}
	assert.Regexp(t, `load: .*cannot restore Run: its region Bin is in Weigh, a transient state`, out)
}
