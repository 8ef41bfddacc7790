package generate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// leaseV1 is a lease held for 30 minutes; later revisions change the
// delay.
const leaseV1 = `version: 2
machine: Lease
package: PKG
output:
  go: .
states:
  Free:
    initial: true
  Held:
    fields:
      hours: {type: int}
    after:
      delay: 30m
      to: Free
events:
  Take:
    fields:
      hours: {type: int}
  Release: {}
transitions:
  - from: Free
    on: Take
    to: Held
  - from: Free
    on: Release
    ignore: true
  - from: Held
    on: Take
    reject: the lease is held
  - from: Held
    on: Release
    to: Free
`

// leaseShorter holds a lease for 10 minutes.
var leaseShorter = strings.Replace(leaseV1, "delay: 30m", "delay: 10m", 1)

// leaseComputed holds a lease for the hours it was taken for, which an
// effect computes.
var leaseComputed = strings.Replace(strings.Replace(leaseV1, "delay: 30m", "delay: leaseFor", 1), "transitions:\n",
	"effects:\n  leaseFor:\n    reads:\n      hours: int\n    sets:\n      delay: time.Duration\ntransitions:\n", 1)

// leaseBehavior is the computed revision's hand-written behaviour.
const leaseBehavior = `package computed

import "time"

// Hours computes a lease's delay.
type Hours struct{}

func (Hours) LeaseFor(hours int) time.Duration { return time.Duration(hours) * time.Hour }
`

// leaseMain saves a lease held with the first revision, and loads it with
// the others, as it was saved and re-armed; then loads it with its "kind"
// in another case.
const leaseMain = `package main

import (
	"fmt"
	"strings"
	"time"

	"example.com/m/computed"
	"example.com/m/shorter"
	"example.com/m/v1"
)

func main() {
	start := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	m, err := v1.New(v1.Config{Handler: &v1.Recorder{Now: start}})
	check(err)
	check(m.HandleEvent(&v1.Take{Hours: 2}))
	saved, err := m.Save()
	check(err)
	fmt.Printf("saved: %s\n", saved)

	for _, rearm := range []bool{false, true} {
		s, err := shorter.LoadWith(shorter.Config{Handler: &shorter.Recorder{}}, saved, shorter.LoadOptions{Rearm: rearm})
		check(err)
		t := s.Timers()[0]
		fmt.Printf("shorter rearm=%t: timer %d, delay %s, deadline %s\n", rearm, t.Timer, t.Delay, s.Deadline(t.Timer).Format(time.RFC3339))
		c, err := computed.LoadWith(computed.Config{Behavior: computed.Hours{}, Handler: &computed.Recorder{}}, saved, computed.LoadOptions{Rearm: rearm})
		check(err)
		ct := c.Timers()[0]
		fmt.Printf("computed rearm=%t: timer %d, delay %s, deadline %s\n", rearm, ct.Timer, ct.Delay, c.Deadline(ct.Timer).Format(time.RFC3339))
	}
	s, err := shorter.Load(shorter.Config{Handler: &shorter.Recorder{}}, saved)
	check(err)
	t := s.Timers()[0]
	fmt.Printf("shorter load: deadline %s\n", s.Deadline(t.Timer).Format(time.RFC3339))

	_, err = v1.Load(v1.Config{Handler: &v1.Recorder{}}, []byte(strings.Replace(string(saved), ` + "`" + `"kind"` + "`" + `, ` + "`" + `"Kind"` + "`" + `, 1)))
	fmt.Printf("recased: %v\n", err)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
`

// TestRetimedLoads saves a machine whose timer runs with one revision and
// loads it with revisions that change the timer's delay: to another
// duration, and to an effect that computes it. Loaded, the timer keeps the
// deadline it was saved with, as fsmgen diff says; LoadWith with Rearm
// moves it to the time the timer started plus the new delay. Data whose
// "kind" is in another case is refused, naming the member.
func TestRetimedLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	machines := map[string]*fsm.Machine{}
	for pkg, src := range map[string]string{"v1": leaseV1, "shorter": leaseShorter, "computed": leaseComputed} {
		spec := filepath.Join(dir, pkg, "lease.yaml")
		require.NoError(t, os.MkdirAll(filepath.Dir(spec), 0o755))
		require.NoError(t, os.WriteFile(spec, []byte(strings.Replace(src, "package: PKG", "package: "+pkg, 1)), 0o644))
		if pkg == "computed" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, pkg, "hours.go"), []byte(leaseBehavior), 0o644))
		}
		res, err := generate.Load(spec)
		require.NoError(t, err)
		require.NotNil(t, res.Machine, "%s: %s", pkg, res.Diags)
		_, err = generate.Write(res.Outputs)
		require.NoError(t, err)
		machines[pkg] = res.Machine
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "lease"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "lease", "main.go"), []byte(leaseMain), 0o644))
	out := goIn(t, dir, "run", "./cmd/lease")
	for _, want := range []string{
		`"timers":[{"state":"held","id":1,"delay":"30m0s","deadline":"2026-11-26T03:30:00Z"}]`,
		// Loaded as saved: the deadline it was saved with.
		"shorter rearm=false: timer 1, delay 30m0s, deadline 2026-11-26T03:30:00Z",
		"computed rearm=false: timer 1, delay 30m0s, deadline 2026-11-26T03:30:00Z",
		"shorter load: deadline 2026-11-26T03:30:00Z",
		// Re-armed: from its start, 03:00, with the new delay.
		"shorter rearm=true: timer 1, delay 10m0s, deadline 2026-11-26T03:10:00Z",
		"computed rearm=true: timer 1, delay 2h0m0s, deadline 2026-11-26T05:00:00Z",
		`recased: v1: decode state: no "kind": "Kind" is not "kind": strict reading takes a member by its name in its exact case`,
	} {
		assert.Contains(t, out, want)
	}

	for _, tt := range []struct {
		to, why string
	}{
		{"shorter", "a machine saved in Held with the timer running loads with the deadline it saved, 30m after the timer started; LoadWith(c, data, LoadOptions{Rearm: true}) moves it to 10m after the timer started"},
		{"computed", "a machine saved in Held with the timer running loads with the deadline it saved, 30m after the timer started; LoadWith(c, data, LoadOptions{Rearm: true}) moves it to the time it started plus the delay leaseFor computes from the state's fields when the machine is loaded (what that is, fsmgen diff cannot know: leaseFor is code)"},
	} {
		var found bool
		for _, c := range diff.Compare(machines["v1"], machines[tt.to]).Changes {
			if c.Subject == "state Held" && strings.HasPrefix(c.What, "timer changed") {
				found = true
				assert.Equal(t, diff.Review, c.Verdicts[diff.SavedStates], "%s: the saved machines load", tt.to)
				assert.Equal(t, tt.why, c.Why[diff.SavedStates], tt.to)
			}
		}
		assert.True(t, found, "%s: fsmgen diff reports the timer's change", tt.to)
	}
}
