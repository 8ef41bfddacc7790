package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"
)

// gateMain drives the gate of the export's chart (transient states as
// the initial states of regions): the guards answer from the lists, in
// the order the machine asks them.
const gateMain = `package main

import (
	"fmt"

	"example.com/m/gate"
)

type answers struct{ wide, bright []bool }

func (a *answers) Wide() bool   { v := a.wide[0]; a.wide = a.wide[1:]; return v }
func (a *answers) Bright() bool { v := a.bright[0]; a.bright = a.bright[1:]; return v }

func run(a *answers, events ...gate.Event) {
	rec := &gate.Recorder{}
	m, err := gate.New(gate.Config{Behavior: a, Handler: rec})
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
}

func main() {
	run(&answers{wide: []bool{true, true, false, false}, bright: []bool{true, true}}, &gate.Go{}, &gate.Open{}, &gate.Shut{})
	run(&answers{wide: []bool{true}, bright: []bool{false}}, &gate.Go{}, &gate.Leave{})
	run(&answers{wide: []bool{false}, bright: []bool{false, false}}, &gate.Go{})
	_, err := gate.Restore(gate.Config{Behavior: &answers{}, Handler: &gate.Recorder{}}, gate.Run{Door: gate.StateCheck, Lamp: gate.StateWarm})
	fmt.Println("restore:", err)
}
`

// mixerMain drives the mixer of the export's chart (transient states
// beside done transitions inside regions).
const mixerMain = `package main

import (
	"fmt"

	"example.com/m/mixer"
)

type heavy bool

func (h heavy) Heavy() bool { return bool(h) }

func run(h bool, events ...mixer.Event) {
	rec := &mixer.Recorder{}
	m, err := mixer.New(mixer.Config{Behavior: heavy(h), Handler: rec})
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
}

func main() {
	run(true, &mixer.Go{}, &mixer.Feed{}, &mixer.Tick{})
	run(false, &mixer.Go{}, &mixer.Tick{}, &mixer.Feed{}, &mixer.Tick{})
}
`

// TestRegionTransientSettles generates the export's charts gate and
// mixer and runs them. Entering gate's Run takes the eventless rules of
// both regions' transient initial states as one microstep, then the
// lamp's, inside Lit, as the next (SCXML 1.0 §3.13); when both regions
// end so, Run's done transition follows in the same step. In mixer, Feed
// leaves a done event waiting (Loading's) while the bin's eventless rule
// runs first and raises Check's behind it; Loading's done then leads into
// Sort, whose eventless rule runs before Check's done transition.
func TestRegionTransientSettles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	t.Parallel()
	dir := tempModule(t)
	for name, main := range map[string]string{"gate": gateMain, "mixer": mixerMain} {
		generateIn(t, dir, name, chartSpec(t, name), map[string]string{"cmd/" + name + "/main.go": main})
	}
	tests := []struct {
		cmd  string
		want []string
	}{
		{"./cmd/gate", []string{
			// Both initial states choose (WentOpen; entries OpenIn, LitIn),
			// then Lit's initial state (WarmIn), in the step of Go.
			"*gate.Go: [IdleOut RunIn DoorIn LampIn WentOpen OpenIn LitIn WarmIn] -> {Door:Opened Lamp:Warm}",
			"*gate.Open: [WarmOut LitOut LitIn ColdIn] -> {Door:Opened Lamp:Cold}",
			"*gate.Shut: [LitOut OpenOut DarkIn WentShut CloseIn] -> {Door:Closed Lamp:Dark}",
			// The lamp ends at once; Leave ends the door, and Run is done.
			"*gate.Go: [IdleOut RunIn DoorIn LampIn WentOpen OpenIn DarkIn] -> {Door:Opened Lamp:Dark}",
			"*gate.Leave: [OpenOut LampOut DoorOut RunOut AllGone IdleIn] -> {}",
			// Both regions end as Run is entered: its done follows at once.
			"*gate.Go: [IdleOut RunIn DoorIn LampIn DarkIn LampOut DoorOut RunOut AllGone IdleIn] -> {}",
			"restore: gate: cannot restore Run: its region Door is in Check, a transient state: the machine never rests there",
		}},
		{"./cmd/mixer", []string{
			"true *mixer.Feed: [EmptyOut FillOut Fed Poured Big CheckIn LoadOut Loaded GoRight RightIn CheckOut Checked FullIn] -> {Belt:Right Bin:Full}",
			"true *mixer.Tick: [FullOut RightOut BinOut BeltOut RunOut AllDone IdleIn] -> {}",
			"false *mixer.Feed: [FillOut Fed LoadOut Loaded GoLeft LeftIn] -> {Belt:Left Bin:Scan}",
			"false *mixer.Tick: [ScanOut LeftOut CheckOut Checked FullIn] -> {Belt:BeltEnd Bin:Full}",
		}},
	}
	for _, tc := range tests {
		out := goIn(t, dir, "run", tc.cmd)
		for _, want := range tc.want {
			assert.Contains(t, out, want, "%s", tc.cmd)
		}
	}
}

// radioMain drives the radio of the emit golden
// parallel_region_deferred_settle: Loud defers Scan beside a transient
// state and a done transition in the other region.
const radioMain = `package main

import (
	"encoding/json"
	"fmt"

	"example.com/m/radio"
)

type answers struct{ strong []bool }

func (a *answers) Strong() bool { v := a.strong[0]; a.strong = a.strong[1:]; return v }

func main() {
	rec := &radio.Recorder{}
	m, err := radio.New(radio.Config{Behavior: &answers{strong: []bool{false, true}}, Handler: rec})
	if err != nil {
		panic(err)
	}
	for _, ev := range []radio.Event{&radio.Power{}, &radio.Scan{}, &radio.Tune{}, &radio.Scan{}, &radio.Seek{}, &radio.Tune{}} {
		rec.Actions = nil
		if err := m.HandleEvent(ev); err != nil {
			panic(err)
		}
		var kinds []string
		for _, a := range rec.Actions {
			kinds = append(kinds, a.Kind().String())
		}
		data, err := m.Save()
		if err != nil {
			panic(err)
		}
		var saved struct {
			State    any ` + "`json:\"state\"`" + `
			Deferred any ` + "`json:\"deferred\"`" + `
		}
		if err := json.Unmarshal(data, &saved); err != nil {
			panic(err)
		}
		fmt.Printf("%T: %v -> %v %v\n", ev, kinds, saved.State, saved.Deferred)
	}
}
`

// TestRegionDeferralSettles generates the radio of the emit golden
// parallel_region_deferred_settle and runs it: a Scan that Loud defers
// is held while Band's transient state and done transition settle the
// regions within each step, and is taken once a step has left Sound in
// Quiet (UML 2.5.1 §14.2.3.9: recall after the run-to-completion step).
func TestRegionDeferralSettles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	t.Parallel()
	ar, err := txtar.ParseFile("../emit/testdata/golden/parallel_region_deferred_settle.txtar")
	require.NoError(t, err)
	require.Equal(t, "spec.yaml", ar.Files[0].Name)
	dir := tempModule(t)
	generateIn(t, dir, "radio", ar.Files[0].Data, map[string]string{"cmd/radio/main.go": radioMain})
	out := goIn(t, dir, "run", "./cmd/radio")
	for _, want := range []string{
		"*radio.Scan: [] -> map[band:fm kind:on sound:loud] [map[kind:scan]]",
		// Tune: Sound to Quiet, Band through Pick into Seeking; then the
		// held Scan is taken in Quiet.
		"*radio.Tune: [Scanned] -> map[band:hunt kind:on sound:loud] <nil>",
		// Seek ends Seeking, whose done leads to FM: Loud still defers.
		"*radio.Seek: [Found] -> map[band:fm kind:on sound:loud] [map[kind:scan]]",
		"*radio.Tune: [Scanned] -> map[band:am kind:on sound:loud] <nil>",
	} {
		assert.Contains(t, out, want)
	}
}
