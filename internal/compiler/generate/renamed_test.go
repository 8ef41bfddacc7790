package generate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// renameV1 is the first revision of a job machine: it is saved while
// Running, with its timer running.
const renameV1 = `version: 2
machine: Job
package: PKG
output:
  go: .
states:
  Queued:
    initial: true
  Running:
    fields:
      worker: {type: string}
    after:
      delay: 5m
      to: Queued
      action: Requeue
  Done:
    terminal: true
    reject: "*"
events:
  Start:
    fields:
      worker: {type: string}
  Finish: {}
actions:
  Requeue: {}
  Notify:
    fields:
      worker: {type: string}
transitions:
  - from: Queued
    on: Start
    to: Running
    action: Notify
  - from: Queued
    on: Finish
    reject: the job is queued
  - from: Running
    on: Start
    ignore: true
  - from: Running
    on: Finish
    to: Done
`

// renameV2 renames the state, the event, the action and the field,
// keeping the old names in renamed_from.
var renameV2 = strings.NewReplacer(
	"  Running:\n", "  Working:\n    renamed_from: [Running]\n",
	"worker: {type: string}", "host: {type: string, renamed_from: [worker]}",
	"  Start:\n", "  Begin:\n    renamed_from: [Start]\n",
	"  Notify:\n", "  Announce:\n    renamed_from: [Notify]\n",
	"from: Running", "from: Working",
	"to: Running", "to: Working",
	"on: Start", "on: Begin",
	"action: Notify", "action: Announce",
).Replace(renameV1)

// renameV2Bare is the second revision without renamed_from.
var renameV2Bare = strings.NewReplacer(
	"    renamed_from: [Running]\n", "",
	"    renamed_from: [Start]\n", "",
	"    renamed_from: [Notify]\n", "",
	", renamed_from: [worker]", "",
).Replace(renameV2)

// renameMain saves a machine of the first revision, with an event and an
// action of its event log, and loads them with the second revision, with
// renamed_from and without.
const renameMain = `package main

import (
	"encoding/json"
	"fmt"
	"time"

	"example.com/m/v1"
	"example.com/m/v2"
	"example.com/m/v2bare"
)

func main() {
	start := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	m, err := v1.New(v1.Config{Handler: &v1.Recorder{Now: start}})
	check(err)
	check(m.HandleEvent(&v1.Start{Worker: "w-7"}))
	saved, err := m.Save()
	check(err)
	event, err := json.Marshal(&v1.Start{Worker: "w-7"})
	check(err)
	action, err := json.Marshal(&v1.Notify{Worker: "w-7"})
	check(err)
	fmt.Printf("saved: %s\n", saved)

	n, err := v2.Load(v2.Config{Handler: &v2.Recorder{}}, saved)
	check(err)
	fmt.Printf("v2 state: %#v\n", n.State())
	for _, t := range n.Timers() {
		fmt.Printf("v2 timer %d: deadline %s\n", t.Timer, n.Deadline(t.Timer).Format(time.RFC3339))
	}
	ev, err := v2.UnmarshalEvent(event)
	check(err)
	fmt.Printf("v2 event: %#v\n", ev)
	act, err := v2.UnmarshalAction(action)
	check(err)
	fmt.Printf("v2 action: %#v\n", act)
	rec := &v2.Recorder{}
	n, err = v2.Load(v2.Config{Handler: rec}, saved)
	check(err)
	check(n.HandleEvent(&v2.TimerFired{Timer: n.Timers()[0].Timer}))
	fmt.Printf("v2 after the timer: %#v, %d actions\n", n.State(), len(rec.Actions))

	_, err = v2bare.Load(v2bare.Config{Handler: &v2bare.Recorder{}}, saved)
	fmt.Printf("v2bare load: %v\n", err)
	_, err = v2bare.UnmarshalEvent(event)
	fmt.Printf("v2bare event: %v\n", err)
	_, err = v2bare.UnmarshalAction(action)
	fmt.Printf("v2bare action: %v\n", err)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
`

// TestRenamedFromLoads saves a machine, an event and an action with one
// revision of a spec and loads them with the next, which renames the
// state (whose timer runs), the event, the action and their field: with
// renamed_from they load under the new names, the timer keeps its
// deadline and fires; without it, loading fails, naming what is unknown:
// the state, not its timer.
func TestRenamedFromLoads(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	for pkg, src := range map[string]string{"v1": renameV1, "v2": renameV2, "v2bare": renameV2Bare} {
		spec := filepath.Join(dir, pkg, "job.yaml")
		require.NoError(t, os.MkdirAll(filepath.Dir(spec), 0o755))
		require.NoError(t, os.WriteFile(spec, []byte(strings.Replace(src, "package: PKG", "package: "+pkg, 1)), 0o644))
		res, err := generate.Load(spec)
		require.NoError(t, err)
		require.NotNil(t, res.Machine, "%s: %s", pkg, res.Diags)
		_, err = generate.Write(res.Outputs)
		require.NoError(t, err)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "rename"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "rename", "main.go"), []byte(renameMain), 0o644))
	out := goIn(t, dir, "run", "./cmd/rename")
	for _, want := range []string{
		`"state":{"kind":"running","worker":"w-7"}`,
		`"timers":[{"state":"running","id":1,"delay":"5m0s","deadline":"2026-11-26T03:05:00Z"}]`,
		`v2 state: v2.Working{Host:"w-7"}`,
		`v2 timer 1: deadline 2026-11-26T03:05:00Z`,
		`v2 event: &v2.Begin{Host:"w-7"}`,
		`v2 action: &v2.Announce{Host:"w-7"}`,
		`v2 after the timer: v2.Queued{}, 1 actions`,
		`v2bare load: v2bare: load a saved machine: state "running" is no longer a state of machine Job: it was removed in this revision, or renamed without its old name in renamed_from (saved with shape sha256:`,
		`v2bare event: v2bare: decode event: unknown kind "start"`,
		`v2bare action: v2bare: decode action: unknown kind "notify"`,
	} {
		assert.Contains(t, out, want)
	}
}
