package export_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/export"
)

// door is a small spec whose parts the cases of TestReport replace: the
// states of the machine and its transitions.
const door = `version: 2
machine: Door
package: door
states:
%STATES%
events:
  Open: {}
  Close: {}
  %EVENT%: {}
actions:
  Ring: {}
  Log:
    fields:
      n: int
transitions:
%TRANSITIONS%
`

// doorSpec writes the door spec with states and transitions in a
// temporary directory and returns its path.
func doorSpec(t *testing.T, event, states, transitions string) string {
	t.Helper()
	if event == "" {
		event = "Knock"
	}
	src := strings.NewReplacer("%EVENT%", event, "%STATES%", states, "%TRANSITIONS%", transitions).Replace(door)
	path := filepath.Join(t.TempDir(), "door.yaml")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

// TestReport checks what each target refuses and what it keeps as
// metadata, on the line that holds the construct: each case gives the
// diagnostics of XState and of SCXML as "line:col: severity: message"
// (the spec's states begin on line 5, its transitions on line 17 plus the
// states' lines).
func TestReport(t *testing.T) {
	t.Parallel()
	const closed = "  Closed:\n    initial: true\n    ignore: [Knock, Open]\n"
	// par is a parallel state Opened with regions Left (L1, L2) and Right
	// (R1, R2); parRows enter and leave it, and move in each region.
	const par = "  Opened:\n    parallel: true\n    ignore: [Open]\n    states:\n      Left:\n        states:\n          L1: {initial: true}\n          L2: {}\n      Right:\n        states:\n          R1: {initial: true}\n          R2: {}\n"
	// nestPar is Closed and Opened in a composite state Door, with Left
	// and Right (as in par) the regions of Media, a parallel state nested
	// as a region of Opened that ignores Knock, beside a region Net.
	const nestPar = "  Door:\n    initial: true\n    states:\n      Closed:\n        initial: true\n        ignore: [Open]\n      Opened:\n        parallel: true\n        ignore: [Open]\n        states:\n          Media:\n            parallel: true\n            ignore: [Knock]\n            states:\n              Left:\n                states:\n                  L1: {initial: true}\n                  L2: {}\n              Right:\n                states:\n                  R1: {initial: true}\n                  R2: {}\n          Net:\n            states:\n              N1: {initial: true}\n"
	const parRows = "  - from: Closed\n    on: Close\n    to: Opened\n  - from: Opened\n    on: Close\n    to: Closed\n  - from: L2\n    on: Knock\n    to: L1\n  - from: L1\n    on: Open\n    to: L2\n  - from: R1\n    on: Open\n    to: R2\n"
	for _, tc := range []struct {
		name              string
		event             string // the third event's name: Knock unless given
		states, rows      string
		xstate, scxml     []string
		wantOut, wantNoXS string // a line the XState output must hold, or must not
	}{
		{
			name:   "an effect with an action's name",
			states: closed + "  Opened:\n    ignore: [Open, Knock]\n",
			rows:   "  - from: Closed\n    on: Close\n    to: Opened\n    effect: Log\n    action: Log\n  - from: Opened\n    on: Close\n    to: Closed\neffects:\n  Log:\n    sets: {n: int}\n",
			xstate: []string{"30:3: error: effect Log has the name of an action: XState names both alike, so rename one of them"},
			scxml:  []string{"30:3: error: effect Log has the name of an action: SCXML names both alike, so rename one of them"},
		},
		{
			name:   "two timers of one delay",
			states: closed + "  Opened:\n    ignore: [Open, Knock, Close]\n    after:\n      - delay: 1s\n        to: Closed\n      - id: ring\n        delay: 1s\n        action: Ring\n",
			rows:   "  - from: Closed\n    on: Close\n    to: Opened\n",
			xstate: []string{"13:9: error: timer ring of Opened has the delay of the timer of Opened (1000): XState's after keys a state's timers by their delay, so give them different delays or put one on a state around"},
		},
		{
			name:    "a parallel state and an In guard",
			states:  closed + par,
			rows:    parRows + "  - from: L1\n    on: Knock\n    guards:\n      - if: In(R1)\n        to: L2\n      - else: true\n        ignore: true\n",
			wantOut: `"type": "parallel"`,
		},
		{
			name:   "a region's rejection beside another region's transition",
			states: closed + par,
			rows:   parRows + "  - from: L1\n    on: Knock\n    reject: not now\n  - from: R2\n    on: Knock\n    action: Ring\n",
			xstate: []string{"46:5: error: region Left of Opened rejects Knock while region Right may take it: fsmgen then refuses Knock for the whole machine (nothing changes, and the regions after Left test no guard), but in XState a rejection is a transition that does nothing and Right's transition still runs: ignore Knock in L1 instead, or handle it there"},
			scxml:  []string{"46:5: error: region Left of Opened rejects Knock while region Right may take it: fsmgen then refuses Knock for the whole machine (nothing changes, and the regions after Left test no guard), but in SCXML a rejection is a transition that does nothing and Right's transition still runs: ignore Knock in L1 instead, or handle it there"},
		},
		{
			name:   "a parallel state's transition beside a region's ignore",
			states: closed + par,
			rows:   parRows + "  - from: R1\n    on: Knock\n    ignore: true\n  - from: Opened\n    on: Knock\n    action: Ring\n",
			scxml:  []string{"49:5: error: Opened's rule Opened --Knock--> (stays) / Ring would also run in SCXML when region Right takes Knock with a rule: SCXML offers Knock to Opened through region Left, which leaves it, and keeps both transitions because their exits do not intersect (SCXML 1.0 §3.13, removeConflictingTransitions), whereas fsmgen runs only the regions' rules: give Left a rule for Knock in the states of Left that leave it, or move this rule into the regions"},
		},
		{
			// Media ignores Knock: SCXML offers it to Media's ignore from
			// Left and Right alike, and only Net leaves it to Opened and
			// Door's rule.
			name:   "a rule around a parallel state beside a nested parallel state's ignore",
			states: nestPar,
			rows:   parRows + "  - from: Door\n    on: Knock\n    to: Closed\n    action: Ring\n",
			scxml:  []string{"56:5: error: Opened's rule Door --Knock--> Closed / Ring would also run in SCXML when Media takes Knock with a rule without a target (an ignore, a rejection or a row without to): SCXML offers Knock to Opened through region Net, which leaves it, and keeps both transitions because their exits do not intersect (SCXML 1.0 §3.13, removeConflictingTransitions), whereas fsmgen runs only the regions' rules: give Net a rule for Knock in the states of Net that leave it, or move this rule into the regions"},
		},
		{
			name:   "a rule into a region's root",
			states: closed + par,
			rows:   parRows + "  - from: L1\n    on: Knock\n    to: Left\n",
			xstate: []string{"46:5: error: rule L1 --Knock--> Left moves into Left, the root of a region of Opened: XState would leave and enter every region of Opened (a transition's domain there is the parallel state or the state around it), fsmgen only Left: move to the state Left starts in (L1) instead"},
			scxml:  []string{"46:5: error: rule L1 --Knock--> Left moves into Left, the root of a region of Opened: SCXML would leave and enter every region of Opened (a transition's domain there is the parallel state or the state around it), fsmgen only Left: move to the state Left starts in (L1) instead"},
		},
		{
			name:   "a row from one region into another of a parallel state with an entry",
			states: closed + strings.Replace(par, "    parallel: true\n", "    parallel: true\n    entry: Ring\n", 1),
			rows:   parRows + "  - from: L2\n    on: Close\n    to: R2\n  - from: L1\n    on: Knock\n    ignore: true\n",
			xstate: []string{"47:5: error: rule L2 --Close--> R2 moves from region Left into region Right of Opened: SCXML 1.0 §3.13 leaves and enters Opened (a transition's domain is the compound state around it), as fsmgen does, but XState takes Opened as the domain and leaves and enters its regions only, so Opened's entry, exit, timers or history would not run: move Opened's entry and exit into its regions, or send an event that region Right takes"},
			scxml:  []string{"47:5: error: rule L2 --Close--> R2 moves from region Left into region Right of Opened: SCXML 1.0 §3.13 leaves and enters Opened (a transition's domain is the compound state around it), as fsmgen does, but SCION takes Opened as the domain and leaves and enters its regions only, so Opened's entry, exit, timers or history would not run: move Opened's entry and exit into its regions, or send an event that region Right takes"},
		},
		{
			name:    "a row from one region into another of a parallel state without an entry",
			states:  closed + par,
			rows:    parRows + "  - from: L2\n    on: Close\n    to: R2\n  - from: L1\n    on: Knock\n    ignore: true\n",
			wantOut: `"target": "#Door.Opened.Right.R2"`,
		},
		{
			name:   "an external rule of a region's root that has an exit",
			states: closed + strings.Replace(par, "      Left:\n", "      Left:\n        exit: Ring\n", 1),
			rows:   parRows + "  - from: Left\n    on: Knock\n    to: L1\n",
			xstate: []string{"47:5: error: rule Left --Knock--> L1 leaves and enters Left, the root of a region of Opened: XState would leave and enter every region of Opened (a transition's domain there is the parallel state or the state around it), fsmgen only Left: make the row local (local: true), or move Left's entry and exit to its states"},
			scxml:  []string{"47:5: error: rule Left --Knock--> L1 leaves and enters Left, the root of a region of Opened: SCXML would leave and enter every region of Opened (a transition's domain there is the parallel state or the state around it), fsmgen only Left: make the row local (local: true), or move Left's entry and exit to its states"},
		},
		{
			name:   "an external rule of a region's root that has a history",
			states: closed + strings.Replace(par, "      Left:\n", "      Left:\n        history: shallow\n", 1),
			rows:   parRows + "  - from: Left\n    on: Knock\n    to: L1\n",
			xstate: []string{"47:5: error: rule Left --Knock--> L1 leaves and enters Left, the root of a region of Opened, whose history remembers the leaf it leaves: XState would leave and enter every region of Opened (a transition's domain there is the parallel state or the state around it), and written local would not leave Left nor remember its leaf; fsmgen leaves and enters Left only: make the row local (local: true), which keeps what the history remembers"},
			scxml:  []string{"47:5: error: rule Left --Knock--> L1 leaves and enters Left, the root of a region of Opened, whose history remembers the leaf it leaves: SCXML would leave and enter every region of Opened (a transition's domain there is the parallel state or the state around it), and written local would not leave Left nor remember its leaf; fsmgen leaves and enters Left only: make the row local (local: true), which keeps what the history remembers"},
		},
		{
			name:   "a rule of a region's root into its own history",
			states: closed + strings.Replace(par, "      Left:\n", "      Left:\n        history: shallow\n", 1),
			rows:   strings.Replace(parRows, "  - from: L2\n    on: Knock\n    to: L1\n", "", 1) + "  - from: Left\n    on: Knock\n    to: Left.history\n",
			xstate: []string{"44:5: error: rule Left --Knock--> Left.history leaves Left, the root of a region of Opened, for its own history: XState would leave and enter every region of Opened (a transition's domain there is the parallel state or the state around it), and written local would not leave Left nor remember its leaf; fsmgen leaves and enters Left only: lead the row to a state of Left with local: true (which keeps what the history remembers), or drop it"},
			scxml:  []string{"44:5: error: rule Left --Knock--> Left.history leaves Left, the root of a region of Opened, for its own history: SCXML would leave and enter every region of Opened (a transition's domain there is the parallel state or the state around it), and written local would not leave Left nor remember its leaf; fsmgen leaves and enters Left only: lead the row to a state of Left with local: true (which keeps what the history remembers), or drop it"},
		},
		{
			name:   "a rule into a region's own deep history that may resume its final state",
			states: closed + strings.NewReplacer("      Left:\n", "      Left:\n        history: deep\n", "          L2: {}\n", "          L2: {}\n          L3: {final: true}\n", "ignore: [Open]", "ignore: [Open, Knock]").Replace(par),
			rows:   parRows + "  - from: L2\n    on: Open\n    to: L3\n  - from: L1\n    on: Knock\n    to: Left.history\n",
			scxml:  []string{"51:5: error: rule L1 --Knock--> Left.history may resume final state L3 of region Left, which the deep history of Left remembers when the machine leaves Left from it: SCXML records a final state in a deep history (SCXML 1.0 §3.10, exitStates), but SCION, the SCXML interpreter the export is checked against, records only its other atomic states and would resume nothing: make the history of Left shallow"},
		},
		{
			name:   "a delay finer than a millisecond",
			states: closed + "  Opened:\n    ignore: [Open, Knock, Close]\n    after:\n      delay: 1500us\n      to: Closed\n",
			rows:   "  - from: Closed\n    on: Close\n    to: Opened\n",
			xstate: []string{"11:7: error: the timer of Opened waits 1.5ms, not a whole number of milliseconds: XState's after counts milliseconds"},
			scxml:  []string{"11:7: error: the timer of Opened waits 1.5ms, not a whole number of milliseconds: the SCXML export writes delays in milliseconds"},
		},
		{
			name:   "an event SCXML would confuse with the timers' events",
			event:  "fsmgen",
			states: "  Closed:\n    initial: true\n    terminal: true\n    ignore: [Open]\n",
			rows:   "  - from: Closed\n    on: [Close, fsmgen]\n    action: Ring\n",
			scxml:  []string{"13:3: error: event fsmgen: SCXML matches event names by their dotted prefix, so it would take the timers' events (fsmgen.timer...) too: rename the event"},
		},
		{
			name:    "an event SCXML would confuse with a region's done.state",
			event:   "done",
			states:  "  Closed:\n    initial: true\n    ignore: [Open, done]\n  Opened:\n    parallel: true\n    ignore: [Open, Close]\n    states:\n      Hinge:\n        states:\n          Loose:\n            initial: true\n          Fixed:\n            final: true\n      Latch:\n        states:\n          Up:\n            initial: true\n",
			rows:    "  - from: Closed\n    on: Close\n    to: Opened\n  - from: Loose\n    on: Close\n    to: Fixed\n  - from: Opened\n    on: done\n    to: Closed\n",
			scxml:   []string{"26:3: error: event done: SCXML matches event names by their dotted prefix, so it would take the done.state events its final states raise too: rename the event"},
			wantOut: `"type": "final"`,
		},
		{
			name:   "a state with the machine's name and a * row",
			states: "  Door:\n    initial: true\n    terminal: true\n    ignore: [Open, Knock]\n",
			rows:   "  - from: \"*\"\n    on: Close\n    action: Ring\n",
			scxml:  []string{"5:3: error: state Door has the machine's name, which the SCXML export gives the state around every state (it holds the \"*\" rows): rename the state or the machine"},
		},
		{
			name:   "an effect named by an ECMAScript reserved word",
			states: closed + "  Opened:\n    ignore: [Open, Knock]\n",
			rows:   "  - from: Closed\n    on: Close\n    to: Opened\n    effect: delete\n    action: Log\n  - from: Opened\n    on: Close\n    to: Closed\neffects:\n  delete:\n    sets: {n: int}\n",
			scxml:  []string{"30:3: error: delete is a reserved word of ECMAScript, the SCXML document's data model, so cond and <script> cannot call it: rename it (go_name keeps its Go name)"},
		},
		{
			name:   "a timer's guard that reads the time its event carries",
			states: closed + "  Opened:\n    ignore: [Open, Knock, Close]\n    after:\n      delay: 1s\n      guards:\n        - if: late\n          to: Closed\n        - else: true\n          ignore: true\n",
			rows:   "  - from: Closed\n    on: Close\n    to: Opened\nimports:\n  time: time\nguards:\n  late:\n    reads:\n      now: time.Time\n",
			xstate: []string{"13:11: warning: late reads now of the timer's event, which XState's timer events do not carry: its implementation there must find it elsewhere"},
			scxml:  []string{"13:11: warning: late reads now of the timer's event, which SCXML's timer events do not carry: its implementation there must find it elsewhere"},
		},
		{
			name:    "a history",
			states:  closed + "  Opened:\n    history: shallow\n    ignore: [Open, Knock]\n    states:\n      Ajar:\n        initial: true\n",
			rows:    "  - from: Closed\n    on: Close\n    to: Opened.history\n  - from: Opened\n    on: Close\n    to: Closed\n",
			wantOut: `"type": "history"`,
		},
		{
			name:    "a done transition",
			states:  closed + "  Opened:\n    ignore: [Open, Knock]\n    done:\n      to: Closed\n    states:\n      Ajar:\n        initial: true\n      Wide:\n        final: true\n",
			rows:    "  - from: Closed\n    on: Close\n    to: Opened\n  - from: Ajar\n    on: Close\n    to: Wide\n",
			wantOut: `"onDone"`,
		},
		{
			name:    "a parallel state's done transition",
			states:  closed + "  Opened:\n    parallel: true\n    ignore: [Open, Knock, Close]\n    done:\n      to: Closed\n    states:\n      Hinge:\n        states:\n          Loose:\n            initial: true\n          Fixed:\n            final: true\n      Latch:\n        states:\n          Up:\n            initial: true\n          Down:\n            final: true\n",
			rows:    "  - from: Closed\n    on: Close\n    to: Opened\n  - from: Loose\n    on: Close\n    to: Fixed\n  - from: Up\n    on: Knock\n    to: Down\n",
			wantOut: `"onDone"`,
		},
		{
			name:   "a history entered from two levels inside",
			states: closed + "  Opened:\n    history: deep\n    ignore: [Open, Knock]\n    states:\n      Ajar:\n        initial: true\n      Wide:\n        states:\n          Inner:\n            initial: true\n",
			rows:   "  - from: Closed\n    on: Close\n    to: Opened\n  - from: Ajar\n    on: Knock\n    to: Wide\n  - from: Inner\n    on: Close\n    to: Opened.history\n  - from: Inner\n    on: Open\n    to: Closed\n  - from: Opened\n    on: Close\n    to: Closed\n",
			xstate: []string{"35:5: error: the transition from Inner into Opened.history: XState leaves and enters up to the state around Inner and the state the history resumes, not the history itself, so from a state nested this deep in Opened it would leave fewer states than fsmgen and SCXML do: write the row on Opened or on a child of it"},
		},
		{
			name:    "a terminal state that does nothing is final",
			states:  closed + "  Gone:\n    terminal: true\n    ignore: \"*\"\n",
			rows:    "  - from: Closed\n    on: Close\n    to: Gone\n",
			wantOut: `"type": "final"`,
		},
		{
			name:   "a deferred event",
			states: "  Closed:\n    initial: true\n    ignore: [Open]\n  Opened:\n    defer: [Knock]\n    ignore: [Open]\n",
			rows:   "  - from: Closed\n    on: Close\n    to: Opened\n  - from: Closed\n    on: Knock\n    action: Ring\n  - from: Opened\n    on: Close\n    to: Closed\n",
			xstate: []string{"9:13: error: state Opened defers Knock: XState has no deferred events, so it cannot keep Knock for a later state; remove the deferral (ignore or handle Knock in Opened) to export the machine"},
			scxml:  []string{"9:13: error: state Opened defers Knock: SCXML has no deferred events, so it cannot keep Knock for a later state; remove the deferral (ignore or handle Knock in Opened) to export the machine"},
		},
		{
			name:   "a deferred event inside a region",
			states: closed + strings.Replace(strings.Replace(par, "ignore: [Open]", "ignore: [Open, Knock]", 1), "R2: {}", "R2:\n            defer: [Knock]", 1),
			rows:   parRows,
			xstate: []string{"20:21: error: state R2 defers Knock: XState has no deferred events, so it cannot keep Knock for a later state; remove the deferral (ignore or handle Knock in R2) to export the machine"},
			scxml:  []string{"20:21: error: state R2 defers Knock: SCXML has no deferred events, so it cannot keep Knock for a later state; remove the deferral (ignore or handle Knock in R2) to export the machine"},
		},
		{
			name:     "a terminal state that still acts is not final",
			states:   closed + "  Gone:\n    terminal: true\n    ignore: [Open, Knock]\n",
			rows:     "  - from: Closed\n    on: Close\n    to: Gone\n  - from: Gone\n    on: Close\n    action: Ring\n",
			wantNoXS: `"type": "final"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, _ := load(t, doorSpec(t, tc.event, tc.states, tc.rows))
			for f, want := range map[export.Format][]string{export.XState: tc.xstate, export.SCXML: tc.scxml} {
				out, diags, err := export.Export(m, f)
				require.NoError(t, err)
				var got []string
				for _, d := range diags {
					got = append(got, fmt.Sprintf("%d:%d: %s: %s", d.Pos.Line, d.Pos.Col, d.Severity, d.Msg))
				}
				assert.Equal(t, want, got, "%s", f)
				assert.Equal(t, diags.HasErrors(), out == nil, "%s: output only when nothing is refused", f)
				if f == export.XState && tc.wantOut != "" {
					assert.Contains(t, string(out), tc.wantOut)
				}
				if f == export.XState && tc.wantNoXS != "" {
					assert.NotContains(t, string(out), tc.wantNoXS)
				}
			}
		})
	}
}

// TestUnexportable checks that the specs the other tests leave out are
// refused by both targets, with the message that names what they cannot
// express, and give no output.
func TestUnexportable(t *testing.T) {
	t.Parallel()
	for path, msg := range unexportable {
		m, _ := load(t, path)
		for _, f := range export.Formats {
			out, diags, err := export.Export(m, f)
			require.NoError(t, err)
			assert.Nil(t, out, "%s: %s", path, f)
			target := map[export.Format]string{export.XState: "XState", export.SCXML: "SCXML"}[f]
			require.True(t, diags.HasErrors(), "%s: %s", path, f)
			assert.Equal(t, strings.ReplaceAll(msg, "%s", target), diags[0].Msg, "%s: %s", path, f)
			assert.Equal(t, export.RuleRefused, diags[0].Rule)
		}
	}
}
