package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// faderMain drives the fader of the export's chart (rules inside regions
// with effects on the parallel state's field level): it prints the
// actions and the state after each step, and what Save and Load keep.
const faderMain = `package main

import (
	"fmt"
	"time"

	"example.com/m/fader"
)

type behavior struct{}

func (behavior) Audible(level int) bool             { return level > 0 }
func (behavior) Raise(level, step int) int          { return level + step }
func (behavior) Lower(level int) int                { return level - 1 }
func (behavior) Hold(level int) time.Duration       { return time.Duration(level+1) * time.Second }

func main() {
	rec := &fader.Recorder{}
	c := fader.Config{Behavior: behavior{}, Handler: rec}
	m, err := fader.New(c)
	if err != nil {
		panic(err)
	}
	for _, ev := range []fader.Event{&fader.Power{}, &fader.Play{}, &fader.Boost{Step: 3}, &fader.Up{Step: 2}, &fader.Down{}, &fader.Mute{}} {
		rec.Actions = nil
		if err := m.HandleEvent(ev); err != nil {
			panic(err)
		}
		var acts []string
		for _, a := range rec.Actions {
			acts = append(acts, fmt.Sprintf("%+v", a))
		}
		fmt.Printf("%T: %v -> %+v\n", ev, acts, m.State())
	}
	data, err := m.Save()
	if err != nil {
		panic(err)
	}
	fmt.Println("saved:", string(data))
	loaded, err := fader.Load(c, data)
	if err != nil {
		panic(err)
	}
	fmt.Printf("loaded: %+v\n", loaded.State())
}
`

// TestRegionFieldsRun generates the export's chart of rules inside
// regions that read and set the parallel state's field
// (testdata/charts/fader) and runs it with a real Behavior: Boost, which
// both regions take in one step, runs raise, then lower on what raise
// set (SCXML 1.0 §3.13, document order), and Beep hands out lower's
// result; Muted's timer takes the delay hold computes from level as it
// starts; Save writes level with the parallel state, and Load reads it.
func TestRegionFieldsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	t.Parallel()
	dir := tempModule(t)
	generateIn(t, dir, "fader", chartSpec(t, "fader"), map[string]string{"cmd/fader/main.go": faderMain})
	out := goIn(t, dir, "run", "./cmd/fader")
	for _, want := range []string{
		"*fader.Power: [] -> {Level:5 Playback:Stopped Volume:Normal}",
		"*fader.Play: [] -> {Level:5 Playback:Playing Volume:Normal}",
		// raise (Playback's) gives 8, then lower (Volume's) reads 8.
		"*fader.Boost: [&{Level:7}] -> {Level:7 Playback:Playing Volume:Normal}",
		"*fader.Up: [&{Level:9}] -> {Level:9 Playback:Playing Volume:Normal}",
		"*fader.Down: [] -> {Level:8 Playback:Playing Volume:Normal}",
		// Volume's constant sets level to 0 before Muted's timer starts:
		// hold(0) is one second.
		"*fader.Mute: [&{Timer:1 Delay:1s}] -> {Level:0 Playback:Stopped Volume:Muted}",
		`"level":0`,
		"loaded: {Level:0 Playback:Stopped Volume:Muted}",
	} {
		assert.Contains(t, out, want)
	}
}
