package export_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fsmgen/fsmgen/internal/compiler/export"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// The random walks of each machine: how many, and how many steps each.
const (
	randomWalks = 25
	walkLength  = 40
)

// The Go driver's view of a walk and of a step (testdata/gomod/driver).
type (
	goWalk struct {
		Machine string    `json:"machine"`
		Steps   []goInput `json:"steps,omitempty"`
		Guards  []bool    `json:"guards,omitempty"`
		Seed    uint64    `json:"seed,omitempty"`
		Length  int       `json:"length,omitempty"`
		Events  []string  `json:"events,omitempty"`
	}
	goInput struct {
		Event string `json:"event,omitempty"`
		State string `json:"state,omitempty"`
		Timer string `json:"timer,omitempty"`
		Fire  bool   `json:"fire,omitempty"`
	}
	goRule struct {
		Rule  int    `json:"rule"`
		From  string `json:"from"`
		Asked int    `json:"asked"` // guards asked in the step before it
		// Leaves are, for a rule of a parallel state that waits, the
		// leaves of its regions as the observer saw them.
		Leaves string `json:"leaves"`
	}
	goResult struct {
		Input  goInput `json:"input"`
		Guards []struct {
			Guard  string `json:"guard"`
			Answer bool   `json:"answer"`
		} `json:"guards"`
		Effects []string `json:"effects"`
		Rules   []goRule `json:"rules"`
		Actions []struct {
			Kind string `json:"kind"`
		} `json:"actions"`
		Leaf   string `json:"leaf"`
		Timers []struct {
			State string `json:"state"`
			Timer string `json:"timer"`
		} `json:"timers"`
		Error string `json:"error"`
	}
)

// The runners' view (testdata/xstate/run.mjs, testdata/scxml/run.cjs).
type (
	jsMachine struct {
		Config   json.RawMessage `json:"config,omitempty"`   // XState
		Document string          `json:"document,omitempty"` // SCXML
		Actions  []string        `json:"actions"`
		Effects  []string        `json:"effects"`
		Guards   []string        `json:"guards"`
		Delays   []string        `json:"delays"`
		Walks    []jsWalk        `json:"walks"`
		Leaving  []string        `json:"leaving,omitempty"` // see leavingGuards
		Waiting  []string        `json:"waiting,omitempty"` // see waitingGuards
		Own      []string        `json:"own,omitempty"`     // see ownGuards
	}
	jsWalk struct {
		// Start are the answers of the guards New tested (an initial
		// state that waits), for the names StartNames.
		Start      []bool   `json:"start"`
		StartNames []string `json:"startNames"`
		Steps      []jsStep `json:"steps"`
	}
	jsStep struct {
		Event  string `json:"event,omitempty"`
		Timer  string `json:"timer,omitempty"` // the target's name of the timer that fires
		Guards []bool `json:"guards"`
		// Names are the guards the answers are for (SCION's runner
		// matches them by name, see run.cjs).
		Names []string `json:"names"`
		// Micro are, for each answer, how many rules the Go machine had
		// fired in the step when it asked the guard: the runners tell by
		// it whether a guard a target asks again in one selection is the
		// Go machine's next ask of it or one in a later microstep.
		Micro []int `json:"micro"`
		// Rejected is set when the Go machine rejected the step's event
		// (see rejected).
		Rejected bool `json:"rejected,omitempty"`
	}
	jsResult struct {
		Trace  []string `json:"trace"`
		Calls  []string `json:"calls"`
		Guards []string `json:"guards"`
		Extra  []string `json:"extra"` // SCION: guards asked again, or where Go does not ask them
		Early  []string `json:"early"` // guards of states that wait asked where Go does not (see earlyGuards)
		Leaf   string   `json:"leaf"`
		Timers []string `json:"timers"`
		Status string   `json:"status"`
		Error  string   `json:"error"`
	}
)

// unexportable are the specs of examples/ and spec/ that neither target
// can express, with the message of their refusal (TestUnexportable checks
// it); the other tests leave them out.
var unexportable = map[string]string{
	"../../../examples/checkout/checkout.yaml": "region Payment of Processing rejects Collected while region Shipping may take it: fsmgen then refuses Collected for the whole machine (nothing changes, and the regions after Payment test no guard), but in %s a rejection is a transition that does nothing and Shipping's transition still runs: ignore Collected in Unpaid instead, or handle it there",
	"../../../spec/agent.yaml":                 "state Running defers UserInput: %s has no deferred events, so it cannot keep UserInput for a later state; remove the deferral (ignore or handle UserInput in Running) to export the machine",
	"../../../examples/link/link.yaml":         "state Offline defers Send: %s has no deferred events, so it cannot keep Send for a later state; remove the deferral (ignore or handle Send in Offline) to export the machine",
}

// specPaths are the specs of the repository, the examples and spec/ (but
// those in unexportable), and the export's own charts (testdata/charts),
// which exercise what those do not: guard chains without else, several
// timers of one state, timers that stay, local and external transitions
// of composite states, histories, parallel states.
func specPaths(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, pattern := range []string{"../../../examples/*/*.yaml", "../../../spec/*.yaml"} {
		ps, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, p := range ps {
			if _, ok := unexportable[p]; ok {
				continue
			}
			paths = append(paths, p)
		}
	}
	require.GreaterOrEqual(t, len(paths), 8, "the examples and spec/")
	charts, err := filepath.Glob("testdata/charts/*/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, charts, "the export's own charts")
	return append(paths, charts...)
}

// corpusSpecs extracts the specs of the conformance corpus
// (internal/compiler/conformance/testdata), small charts that each pin
// one point of the hierarchical semantics, into a temporary directory,
// one directory per case named after it; the cases whose spec must not
// build are left out.
func corpusSpecs(t *testing.T) []string {
	t.Helper()
	archives, err := filepath.Glob("../conformance/testdata/*.txtar")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(archives), 25, "the conformance corpus")
	dir := t.TempDir()
	var out []string
	for _, path := range archives {
		ar, err := txtar.ParseFile(path)
		require.NoError(t, err)
		var spec []byte
		skip := false
		for _, f := range ar.Files {
			switch f.Name {
			case "spec.yaml":
				spec = f.Data
			case "script":
				skip = strings.Contains(string(f.Data), "want build error")
			}
		}
		if skip {
			continue
		}
		require.NotNil(t, spec, "%s has no spec.yaml", path)
		caseDir := filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".txtar"))
		require.NoError(t, os.MkdirAll(caseDir, 0o755))
		specPath := filepath.Join(caseDir, "spec.yaml")
		require.NoError(t, os.WriteFile(specPath, spec, 0o644))
		out = append(out, specPath)
	}
	return out
}

// specKey names a spec in the program and the goldens: its file name
// without .yaml.
func specKey(path string) string { return strings.TrimSuffix(filepath.Base(path), ".yaml") }

// target is one side the Go machine is compared with: an export format,
// the runner that runs it and the name it gives a timer.
type target struct {
	format       export.Format
	runner       string // the runner's path, beside its node_modules
	timerName    func(*fsm.Machine, *fsm.Timer) string
	intermediate func(*fsm.Machine, string) bool // a state of the target's own, not of the spec
}

// exportTargets returns the targets: XState and SCION, each with its
// runner installed.
func exportTargets(t *testing.T) []target {
	t.Helper()
	return []target{
		{format: export.XState, runner: npmRunner(t, "xstate", "run.mjs"), timerName: afterEvent,
			intermediate: func(*fsm.Machine, string) bool { return false }},
		{format: export.SCXML, runner: npmRunner(t, "scxml", "run.cjs"), timerName: sendID,
			intermediate: func(m *fsm.Machine, id string) bool { return strings.HasPrefix(id, "$") || id == m.Name }},
	}
}

// TestDifferential runs the exports of every spec of the repository, and
// of the conformance corpus' charts, against the generated Go machine:
// the XState export in XState v5 and the SCXML export in SCION (an SCXML
// interpreter), both under node, on every witness path (the shortest
// events that fire each rule) and on seeded random walks of events and
// timers. After New and after each step, each must rest in the same leaf
// as the Go machine, have exited and entered the same states in the same
// order, run the same effects and handed out the same actions in the same
// order, asked the same guards in the same order, and run the same
// timers. Guards are answered on the Go side (as each witness path needs,
// or at random), and each target is given, for each step, the answers the
// Go machine's guards gave, in order: a guard it asks that Go did not, or
// in another order, fails the test.
func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds every generated machine and runs node")
	}
	t.Parallel()
	targets := exportTargets(t)
	paths := map[string]string{}
	for _, path := range specPaths(t) {
		paths[specKey(path)] = path
	}
	for _, path := range corpusSpecs(t) {
		paths["conformance_"+filepath.Base(filepath.Dir(path))] = path
	}
	specs, keys, walks, goResults := goSide(t, paths)
	for _, tg := range targets {
		t.Run(string(tg.format), func(t *testing.T) {
			compareTarget(t, tg, specs, keys, walks, goResults)
		})
	}
}

// goSide loads the specs (by key), builds their generated machines into
// one program and runs it on their witness paths and random walks; it
// returns the loaded specs, their keys in order, the walks and what the
// Go machines did on each.
func goSide(t *testing.T, paths map[string]string) (map[string]*generate.Result, []string, []goWalk, [][]goResult) {
	t.Helper()
	specs := map[string]*generate.Result{}
	var keys []string
	for key, path := range paths {
		res, err := generate.Load(path)
		require.NoError(t, err)
		require.NotNil(t, res.Machine, "%s does not check:\n%s", path, res.Diags.Error())
		specs[key] = res
		keys = append(keys, key)
	}
	slices.Sort(keys)
	bin := goProgram(t, specs)

	var walks []goWalk
	for _, key := range keys {
		walks = append(walks, walksOf(key, specs[key].Machine)...)
	}
	data, err := json.Marshal(walks)
	require.NoError(t, err)
	var goResults [][]goResult
	require.NoError(t, json.Unmarshal(runProgram(t, bin, data), &goResults))
	require.Len(t, goResults, len(walks))
	return specs, keys, walks, goResults
}

// compareTarget replays the Go machines' walks in one target and
// compares every step.
func compareTarget(t *testing.T, tg target, specs map[string]*generate.Result, keys []string, walks []goWalk, goResults [][]goResult) {
	exported := func(key string, m *fsm.Machine) []byte {
		out, diags, err := export.Export(m, tg.format)
		require.NoError(t, err)
		require.NotNil(t, out, "%s: the export was refused:\n%s", key, diags.Error())
		return out
	}
	jsResults := replay(t, tg, specs, keys, walks, goResults, exported)
	steps := 0
	for i, w := range walks {
		m := specs[w.Machine].Machine
		js := jsResults[i]
		name := fmt.Sprintf("%s/witness-%d", w.Machine, i)
		if w.Length > 0 {
			name = fmt.Sprintf("%s/random-%d", w.Machine, w.Seed)
		}
		if !assert.Len(t, js, len(goResults[i]), "%s: the target's steps", name) {
			continue
		}
		for j, g := range goResults[i] {
			steps++
			prev := ""
			if j > 0 {
				prev = goResults[i][j-1].Leaf
			}
			if !compareStep(t, tg, m, fmt.Sprintf("%s step %d (%s)", name, j, inputText(g.Input)), prev, g, js[j]) {
				t.Logf("%s: the steps up to the one that parts them:\n%s", name, walkText(goResults[i][:j+1]))
				break // the walks part: the rest would only repeat it
			}
		}
	}
	t.Logf("%d walks, %d steps compared with %s", len(walks), steps, tg.format)
}

// replay replays the Go machines' walks in one target, each machine as
// exported returns it, and returns the target's steps of each walk.
func replay(t *testing.T, tg target, specs map[string]*generate.Result, keys []string, walks []goWalk, goResults [][]goResult, exported func(key string, m *fsm.Machine) []byte) [][]jsResult {
	t.Helper()
	// The same walks for the target: the events and timers the Go
	// machine was sent, with the answers its guards gave.
	index := map[string]int{}
	var machines []jsMachine
	for _, key := range keys {
		m := specs[key].Machine
		out := exported(key, m)
		var jm jsMachine
		if tg.format == export.XState {
			jm.Config = out
		} else {
			jm.Document = string(out)
		}
		for _, a := range m.Actions {
			if !a.Builtin {
				jm.Actions = append(jm.Actions, a.Name)
			}
		}
		jm.Leaving = leavingGuards(m)
		jm.Waiting = waitingGuards(m)
		jm.Own = ownGuards(m)
		for _, fn := range m.Guards {
			jm.Guards = append(jm.Guards, fn.Name)
		}
		for _, fn := range m.Effects {
			jm.Effects = append(jm.Effects, fn.Name)
		}
		for _, tm := range m.Timers {
			if tm.DelayFunc != nil && !slices.Contains(jm.Delays, tm.DelayFunc.Name) {
				jm.Delays = append(jm.Delays, tm.DelayFunc.Name)
			}
		}
		index[key] = len(machines)
		machines = append(machines, jm)
	}
	for i, w := range walks {
		m := specs[w.Machine].Machine
		jw := jsWalk{Start: []bool{}}
		for _, g := range goResults[i][0].Guards {
			jw.Start = append(jw.Start, g.Answer)
			jw.StartNames = append(jw.StartNames, g.Guard)
		}
		for _, r := range goResults[i][1:] {
			st := jsStep{Guards: []bool{}, Micro: []int{}}
			for i, g := range r.Guards {
				st.Guards = append(st.Guards, g.Answer)
				st.Names = append(st.Names, g.Guard)
				st.Micro = append(st.Micro, firedBefore(r.Rules, i))
			}
			st.Rejected = rejected(m, r)
			if r.Input.Fire {
				st.Timer = tg.timerName(m, timerOf(t, m, r.Input.State, r.Input.Timer))
			} else {
				st.Event = eventOf(t, m, r.Input.Event).Name
			}
			jw.Steps = append(jw.Steps, st)
		}
		jm := &machines[index[w.Machine]]
		jm.Walks = append(jm.Walks, jw)
	}
	data, err := json.Marshal(machines)
	require.NoError(t, err)
	var jsResults [][][]jsResult
	require.NoError(t, json.Unmarshal(runNode(t, tg.runner, data), &jsResults))
	next := map[string]int{}
	out := make([][]jsResult, len(walks))
	for i, w := range walks {
		out[i] = jsResults[index[w.Machine]][next[w.Machine]]
		next[w.Machine]++
	}
	return out
}

// walksOf lists the walks of one machine: its witness paths, then the
// random walks.
func walksOf(key string, m *fsm.Machine) []goWalk {
	var out []goWalk
	for _, p := range m.Paths {
		if len(p.Steps) == 0 {
			// A rule without a witness path ("no path from New"): its
			// walk would be New alone, which the other walks take, and
			// with no answers for the guards New tests when the initial
			// state waits on eventless rows.
			continue
		}
		w := goWalk{Machine: key, Guards: []bool{}}
		for _, way := range p.Steps {
			switch {
			case way.Event == nil:
				// New's own step (an initial state that waits): its
				// answers come first, New takes them.
			case way.Timer != nil:
				w.Steps = append(w.Steps, goInput{State: way.Timer.State.Snake, Timer: way.Timer.ID, Fire: true})
			default:
				w.Steps = append(w.Steps, goInput{Event: way.Event.Snake})
			}
			for _, test := range way.Tests {
				w.Guards = append(w.Guards, test.Holds)
			}
		}
		out = append(out, w)
	}
	var events []string
	for _, e := range m.Events {
		if e != m.TimerFired {
			events = append(events, e.Snake)
		}
	}
	for seed := range uint64(randomWalks) {
		out = append(out, goWalk{Machine: key, Seed: seed + 1, Length: walkLength, Events: events})
	}
	return out
}

// firedBefore returns how many of a step's rules fired before its guard
// ask i (goRule.Asked: the guards asked before each rule).
func firedBefore(rules []goRule, i int) int {
	n := 0
	for _, r := range rules {
		if r.Asked <= i {
			n++
		}
	}
	return n
}
