package diff_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// jobSpec is the revision the cases change: a job queued, running under a
// timer, held, and done.
const jobSpec = `version: 2
machine: Job
package: job
output:
  go: .
states:
  Queued:
    initial: true
    fields:
      attempts: {type: int}
  Running:
    doc: The job runs on a worker.
    fields:
      attempts: {type: int}
      worker: {type: string}
    ignore: [Start, Hold, Release]
    after:
      delay: 5m
      to: Queued
      action: Requeue
  Held:
    fields:
      attempts: {type: int}
      reason: {type: string}
    reject: "*"
  Done:
    terminal: true
    reject: "*"
events:
  Start:
    fields:
      worker: {type: string}
  Finish: {}
  Hold:
    fields:
      reason: {type: string}
  Release: {}
actions:
  Requeue: {}
  Notify:
    fields:
      worker: {type: string}
guards:
  canRetry:
    reads:
      attempts: int
transitions:
  - from: Queued
    on: Start
    to: Running
    action: Notify
  - from: Queued
    on: Finish
    reject: the job is queued
  - from: Queued
    on: Hold
    to: Held
  - from: Queued
    on: Release
    ignore: true
  - from: Running
    on: Finish
    guards:
      - if: canRetry
        to: Queued
      - else: true
        to: Done
  - from: Held
    on: Release
    to: Queued
`

// oneTimer is the timer of Running in jobSpec; twoTimers(delay) puts
// beside it a timer nudge with that delay.
const oneTimer = "    after:\n      delay: 5m\n      to: Queued\n      action: Requeue\n"

func twoTimers(delay string) string {
	return "    after:\n      - delay: 5m\n        to: Queued\n        action: Requeue\n      - id: nudge\n        delay: " + delay + "\n        action: Notify\n"
}

// edit applies replacements to jobSpec, failing when one does not apply.
func edit(t *testing.T, pairs ...string) string {
	t.Helper()
	s := jobSpec
	for i := 0; i < len(pairs); i += 2 {
		require.Contains(t, s, pairs[i], "the edit's old text")
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// composite is jobSpec with Running made composite, its timer's delay
// delay.
func composite(delay string) string {
	return strings.NewReplacer(
		"      delay: 5m\n", "      delay: "+delay+"\n",
		"  Held:\n", "    states:\n      Fetching:\n        initial: true\n  Held:\n",
	).Replace(jobSpec)
}

// machine checks a revision of the spec.
func machine(t *testing.T, name, src string) *fsm.Machine {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.yaml")
	res := generate.Revision(path, name, []byte(src))
	require.NotNil(t, res.Machine, "%s does not check:\n%s", name, res.Diags)
	return res.Machine
}

// want is a change a case expects: its subject and what, and its verdicts
// that are not ok, as "area=verdict".
type want struct {
	subject, what string
	verdicts      []string
	declared      bool
}

// changes returns the changes of rep as a case expects them (want),
// whether a change is declared left out.
func changes(rep *diff.Report) []want {
	var got []want
	for _, c := range rep.Changes {
		w := want{subject: c.Subject, what: c.What}
		for a := diff.SavedStates; a <= diff.Behaviour; a++ {
			if c.Verdicts[a] != diff.OK {
				w.verdicts = append(w.verdicts, a.Key()+"="+c.Verdicts[a].String())
			}
		}
		got = append(got, w)
	}
	return got
}

func TestCompare(t *testing.T) {
	renamed := edit(t,
		"  Held:\n", "  Paused:\n    renamed_from: [Held]\n",
		"      reason: {type: string}\n    reject", "      why: {type: string, renamed_from: [reason]}\n    reject",
		"  Hold:\n    fields:\n      reason: {type: string}\n", "  Pause:\n    renamed_from: [Hold]\n    fields:\n      why: {type: string, renamed_from: [reason]}\n",
		"ignore: [Start, Hold, Release]", "ignore: [Start, Pause, Release]",
		"    on: Hold\n    to: Held", "    on: Pause\n    to: Paused",
		"  - from: Held\n", "  - from: Paused\n",
	)
	noTimer := edit(t,
		"    after:\n      delay: 5m\n      to: Queued\n      action: Requeue\n", "",
		"ignore: [Start, Hold, Release]", "ignore: [Hold, Release]",
		"  - from: Held\n", "  - from: Running\n    on: Start\n    to: Queued\n    action: Requeue\n  - from: Held\n",
	)
	tests := []struct {
		name   string
		old    string
		new    string
		breaks int
		want   []want
		unused []string
	}{
		{name: "the same spec", old: jobSpec, new: jobSpec},
		{
			name: "documentation only",
			old:  jobSpec,
			new: edit(t,
				"    doc: The job runs on a worker.\n", "    doc: The job runs on one of the workers, until it finishes or its time is up.\n",
				"  Finish: {}\n", "  Finish:\n    doc: The worker is done with the job.\n",
				"      reason: {type: string}\n    reject", "      reason: {type: string, doc: says why the job waits.}\n    reject",
			),
		},
		{
			name:   "a state and an event removed",
			old:    jobSpec,
			new:    strings.Replace(strings.Replace(strings.Replace(strings.Replace(strings.Replace(jobSpec, "  Held:\n    fields:\n      attempts: {type: int}\n      reason: {type: string}\n    reject: \"*\"\n", "", 1), "  Hold:\n    fields:\n      reason: {type: string}\n", "", 1), "  - from: Queued\n    on: Hold\n    to: Held\n", "", 1), "ignore: [Start, Hold, Release]", "ignore: [Start, Release]", 1), "  - from: Held\n    on: Release\n    to: Queued\n", "", 1),
			breaks: 2,
			want: []want{
				{subject: "state Held", what: "removed", verdicts: []string{"saved_states=breaks"}},
				{subject: "event Hold", what: "removed", verdicts: []string{"event_log=breaks"}},
			},
		},
		{
			name:   "renamed without renamed_from",
			old:    jobSpec,
			new:    strings.NewReplacer("    renamed_from: [Held]\n", "", "    renamed_from: [Hold]\n", "", ", renamed_from: [reason]", "").Replace(renamed),
			breaks: 2,
			want: []want{
				{subject: "state Held", what: "removed", verdicts: []string{"saved_states=breaks"}},
				{subject: "event Hold", what: "removed", verdicts: []string{"event_log=breaks"}},
				{subject: "state Paused", what: "added"},
				// Paused and Done reject what they have no rule for.
				{subject: "event Pause", what: "added", verdicts: []string{"behaviour=review"}},
			},
		},
		{
			name: "renamed with renamed_from",
			old:  jobSpec,
			new:  renamed,
			want: []want{
				{subject: "state Paused", what: "renamed from Held", verdicts: []string{"code=review"}},
				{subject: "field Paused.why", what: "renamed from reason", verdicts: []string{"code=review"}},
				{subject: "event Pause", what: "renamed from Hold", verdicts: []string{"code=review"}},
				{subject: "field Pause.why", what: "renamed from reason", verdicts: []string{"code=review"}},
			},
		},
		{
			name: "fields retyped",
			old:  jobSpec,
			new: edit(t,
				"      reason: {type: string}\n    reject", "      reason: {type: int}\n    reject",
				"  Hold:\n    fields:\n      reason: {type: string}\n", "  Hold:\n    fields:\n      reason: {type: int}\n",
			),
			breaks: 2,
			want: []want{
				{subject: "field Held.reason", what: "retyped from string to int", verdicts: []string{"saved_states=breaks"}},
				{subject: "field Hold.reason", what: "retyped from string to int", verdicts: []string{"event_log=breaks"}},
			},
		},
		{
			name: "a field added",
			old:  jobSpec,
			new:  edit(t, "  Finish: {}\n", "  Finish:\n    fields:\n      note: {type: string}\n"),
			want: []want{{subject: "field Finish.note", what: "added"}},
		},
		{
			name:   "an action added, and a new event rejected through \"*\"",
			old:    jobSpec,
			new:    edit(t, "  Release: {}\n", "  Release: {}\n  Cancel: {}\n", "  Requeue: {}\n", "  Requeue: {}\n  Alert: {}\n", "    on: Hold\n    to: Held\n", "    on: Hold\n    to: Held\n    action: Alert\n", "  - from: Queued\n    on: Release\n", "  - from: [Queued, Running]\n    on: Cancel\n    to: Done\n  - from: Queued\n    on: Release\n"),
			breaks: 2,
			want: []want{
				{subject: "event Cancel", what: "added", verdicts: []string{"behaviour=review"}},
				{subject: "action Alert", what: "added", verdicts: []string{"code=breaks"}},
				{subject: "rule Queued × Hold", what: "now to Held / Alert, was to Held", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name:   "a rule and a timer changed",
			old:    jobSpec,
			new:    edit(t, "    on: Release\n    ignore: true\n", "    on: Release\n    reject: nothing is held\n", "      delay: 5m\n", "      delay: 10m\n"),
			breaks: 2,
			want: []want{
				{subject: "state Running", what: "timer changed: fires after 10m: to Queued / Requeue, was fires after 5m: to Queued / Requeue", verdicts: []string{"saved_states=review", "behaviour=breaks"}},
				{subject: "rule Queued × Release", what: "now rejected (nothing is held), was ignored", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name:   "a timer's delay computed by an effect",
			old:    jobSpec,
			new:    edit(t, "      delay: 5m\n", "      delay: lease\n", "guards:\n", "effects:\n  lease:\n    reads:\n      attempts: int\n    sets:\n      delay: time.Duration\nguards:\n"),
			breaks: 2,
			want: []want{
				{subject: "state Running", what: "timer changed: fires after the delay lease computes: to Queued / Requeue, was fires after 5m: to Queued / Requeue", verdicts: []string{"saved_states=review", "behaviour=breaks"}},
				{subject: "effect lease", what: "added", verdicts: []string{"code=breaks"}},
			},
		},
		{
			name:   "the timer of a composite state changed",
			old:    composite("5m"),
			new:    composite("1m"),
			breaks: 1,
			want: []want{
				{subject: "state Running", what: "timer changed: fires after 1m: to Queued / Requeue, was fires after 5m: to Queued / Requeue", verdicts: []string{"saved_states=review", "behaviour=breaks"}},
			},
		},
		{
			name:   "a timer removed",
			old:    jobSpec,
			new:    noTimer,
			breaks: 6,
			want: []want{
				{subject: "state Running", what: "lost the timer of Running", verdicts: []string{"saved_states=breaks"}},
				{subject: "state Running", what: "timer changed: nothing, was fires after 5m: to Queued / Requeue", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Running × Start", what: "now to Queued / Requeue, was ignored", verdicts: []string{"behaviour=breaks"}},
				{subject: "event TimerFired", what: "removed", verdicts: []string{"event_log=breaks"}},
				{subject: "action StartTimer", what: "removed", verdicts: []string{"event_log=breaks"}},
				{subject: "action CancelTimer", what: "removed", verdicts: []string{"event_log=breaks"}},
			},
		},
		{
			name:   "a timer added",
			old:    noTimer,
			new:    jobSpec,
			breaks: 5,
			want: []want{
				{subject: "state Running", what: "gained the timer of Running", verdicts: []string{"saved_states=breaks"}},
				{subject: "state Running", what: "timer changed: fires after 5m: to Queued / Requeue, was nothing", verdicts: []string{"behaviour=breaks"}},
				{subject: "rule Running × Start", what: "now ignored, was to Queued / Requeue", verdicts: []string{"behaviour=breaks"}},
				{subject: "event TimerFired", what: "added"},
				{subject: "action StartTimer", what: "added", verdicts: []string{"code=breaks"}},
				{subject: "action CancelTimer", what: "added", verdicts: []string{"code=breaks"}},
			},
		},
		{
			name:   "a second timer added to a state",
			old:    jobSpec,
			new:    edit(t, oneTimer, twoTimers("1m")),
			breaks: 2,
			want: []want{
				{subject: "state Running", what: "gained timer nudge of Running", verdicts: []string{"saved_states=breaks"}},
				{subject: "state Running", what: "added timer nudge: fires after 1m: stays / Notify", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name:   "one of two timers removed",
			old:    edit(t, oneTimer, twoTimers("1m")),
			new:    jobSpec,
			breaks: 2,
			want: []want{
				{subject: "state Running", what: "lost timer nudge of Running", verdicts: []string{"saved_states=breaks"}},
				{subject: "state Running", what: "removed timer nudge: fires after 1m: stays / Notify", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name:   "one of two timers changed",
			old:    edit(t, oneTimer, twoTimers("1m")),
			new:    edit(t, oneTimer, twoTimers("2m")),
			breaks: 1,
			want: []want{
				{subject: "state Running", what: "timer nudge changed: fires after 2m: stays / Notify, was fires after 1m: stays / Notify", verdicts: []string{"saved_states=review", "behaviour=breaks"}},
			},
		},
		{
			name:   "a field every state had is gone from one",
			old:    edit(t, "  Done:\n    terminal: true\n", "  Done:\n    terminal: true\n    fields:\n      attempts: {type: int}\n"),
			new:    jobSpec,
			breaks: 2,
			want: []want{
				{subject: "field Done.attempts", what: "removed", verdicts: []string{"saved_states=breaks"}},
				{subject: "function AttemptsOf", what: "lost AttemptsOf and WithAttempts", verdicts: []string{"code=breaks"}},
			},
		},
		{
			name: "a field now shared by every state",
			old:  jobSpec,
			new:  edit(t, "  Done:\n    terminal: true\n", "  Done:\n    terminal: true\n    fields:\n      attempts: {type: int}\n"),
			want: []want{
				{subject: "field Done.attempts", what: "added"},
				{subject: "function AttemptsOf", what: "gained AttemptsOf and WithAttempts"},
			},
		},
		{
			name:   "a chain's else removed: it falls back to the state around it",
			old:    edit(t, "  - from: Held\n    on: Release\n    to: Queued\n", "  - from: Held\n    on: Release\n    guards:\n      - if: canRetry\n        to: Queued\n      - else: true\n        ignore: true\n  - from: \"*\"\n    on: Release\n    to: Done\n"),
			new:    edit(t, "  - from: Held\n    on: Release\n    to: Queued\n", "  - from: Held\n    on: Release\n    guards:\n      - if: canRetry\n        to: Queued\n  - from: \"*\"\n    on: Release\n    to: Done\n"),
			breaks: 1,
			want: []want{
				{subject: "rule Held × Release", what: `now [canRetry] to Queued; no guard holds: as the "*" row (to Done), was [canRetry] to Queued; [else] ignored`, verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name:   "an action renamed with renamed_from",
			old:    jobSpec,
			new:    edit(t, "  Requeue: {}\n", "  Retry:\n    renamed_from: [Requeue]\n", "      action: Requeue\n", "      action: Retry\n"),
			breaks: 1,
			want:   []want{{subject: "action Retry", what: "renamed from Requeue", verdicts: []string{"code=breaks"}}},
		},
		{
			name:   "an action given another field",
			old:    jobSpec,
			new:    edit(t, "  Notify:\n    fields:\n      worker: {type: string}\n", "  Notify:\n    fields:\n      worker: {type: string}\n      attempts: {type: int}\n"),
			breaks: 1,
			want: []want{
				{subject: "field Notify.attempts", what: "added"},
				{subject: "action Notify", what: "given other fields", verdicts: []string{"code=breaks"}},
			},
		},
		{
			name:   "a guard given another field to read",
			old:    jobSpec,
			new:    edit(t, "    reads:\n      attempts: int\n", "    reads:\n      attempts: int\n      worker: string\n"),
			breaks: 1,
			want:   []want{{subject: "guard canRetry", what: "given other reads or sets", verdicts: []string{"code=breaks"}}},
		},
		{
			name:   "the last guard removed",
			old:    jobSpec,
			new:    edit(t, "guards:\n  canRetry:\n    reads:\n      attempts: int\n", "", "    guards:\n      - if: canRetry\n        to: Queued\n      - else: true\n        to: Done\n", "    to: Done\n"),
			breaks: 2,
			want: []want{
				{subject: "guard canRetry", what: "removed", verdicts: []string{"code=breaks"}},
				{subject: "rule Running × Finish", what: "now to Done, was [canRetry] to Queued; [else] to Done", verdicts: []string{"behaviour=breaks"}},
			},
		},
		{
			name:   "an entry action added",
			old:    jobSpec,
			new:    edit(t, "      reason: {type: string}\n    reject", "      reason: {type: string}\n    entry: Requeue\n    reject"),
			breaks: 1,
			want:   []want{{subject: "state Held", what: "entry changed: emits Requeue, was nothing", verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name:   "a state made composite",
			old:    jobSpec,
			new:    edit(t, "      reason: {type: string}\n    reject: \"*\"\n", "      reason: {type: string}\n    reject: \"*\"\n    states:\n      Waiting:\n        initial: true\n"),
			breaks: 1,
			want: []want{
				{subject: "state Held", what: "made composite", verdicts: []string{"saved_states=breaks"}},
				{subject: "state Waiting", what: "added"},
			},
		},
		{
			name: "breaks declared",
			old:  jobSpec,
			new: edit(t,
				"      reason: {type: string}\n    reject", "      reason: {type: int}\n    reject",
				"  Hold:\n    fields:\n      reason: {type: string}\n", "  Hold:\n    fields:\n      reason: {type: int}\n",
				"transitions:\n", "breaks:\n  - change: field Held.reason\n    why: reasons are codes now; held jobs are released before the upgrade.\n  - change: field Hold.reason\n    why: the event log is replayed by the previous release.\n  - change: state Gone\n    why: a state that never was.\ntransitions:\n",
			),
			want: []want{
				{subject: "field Held.reason", what: "retyped from string to int", verdicts: []string{"saved_states=breaks"}, declared: true},
				{subject: "field Hold.reason", what: "retyped from string to int", verdicts: []string{"event_log=breaks"}, declared: true},
			},
			unused: []string{"state Gone"},
		},
		{
			// As a spec takes RFC-style names: the JSON and the Go
			// names stay, so nothing saved or written by hand breaks.
			name: "names spelt anew, the same in JSON and in Go",
			old:  jobSpec,
			new: strings.NewReplacer(
				"  Held:\n", "  HELD:\n", "to: Held", "to: HELD", "from: Held", "from: HELD",
				"  Hold:\n", "  HOLD:\n", "on: Hold", "on: HOLD", "[Start, Hold,", "[Start, HOLD,",
				"  Requeue: {}", "  REQUEUE: {}", "action: Requeue", "action: REQUEUE",
				"reason: {type: string}", "REASON: {type: string}",
				"canRetry", "CAN_RETRY",
			).Replace(jobSpec),
			want: []want{
				{subject: "state HELD", what: "renamed from Held"},
				{subject: "field HELD.REASON", what: "renamed from reason"},
				{subject: "event HOLD", what: "renamed from Hold"},
				{subject: "field HOLD.REASON", what: "renamed from reason"},
				{subject: "action REQUEUE", what: "renamed from Requeue"},
			},
		},
		{
			name: "Go names given with go_name",
			old:  jobSpec,
			new: edit(t,
				"  Held:\n", "  Held:\n    go_name: OnHold\n",
				"  Requeue: {}", "  Requeue: {go_name: Retry}",
				"      reason: {type: string}\n    reject", "      reason: {type: string, go_name: Why}\n    reject",
				"  canRetry:\n", "  canRetry:\n    go_name: MayRetry\n",
			),
			breaks: 2,
			want: []want{
				{subject: "state Held", what: "Go name now OnHold, was Held", verdicts: []string{"code=review"}},
				{subject: "field Held.reason", what: "Go name now Why, was Reason", verdicts: []string{"code=review"}},
				{subject: "action Requeue", what: "Go name now Retry, was Requeue", verdicts: []string{"code=breaks"}},
				{subject: "guard canRetry", what: "Go name now MayRetry, was CanRetry", verdicts: []string{"code=breaks"}},
			},
		},
		{
			name:   "a row given a second event",
			old:    jobSpec,
			new:    edit(t, "  - from: Held\n    on: Release\n", "  - from: Held\n    on: [Release, Finish]\n"),
			breaks: 1,
			want:   []want{{subject: "rule Held × Finish", what: "now to Queued, was rejected", verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name: "two rows made one with two events",
			old:  edit(t, "  - from: Held\n    on: Release\n    to: Queued\n", "  - from: Held\n    on: Release\n    to: Queued\n  - from: Held\n    on: Finish\n    to: Queued\n"),
			new:  edit(t, "  - from: Held\n    on: Release\n", "  - from: Held\n    on: [Release, Finish]\n"),
		},
		{
			name:   "a constant set by a row",
			old:    jobSpec,
			new:    edit(t, "    on: Hold\n    to: Held\n", "    on: Hold\n    to: Held\n    set: {reason: manual}\n"),
			breaks: 1,
			want:   []want{{subject: "rule Queued × Hold", what: `now to Held {reason="manual"}, was to Held`, verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name:   "a constant changed",
			old:    edit(t, "    on: Hold\n    to: Held\n", "    on: Hold\n    to: Held\n    set: {reason: manual}\n"),
			new:    edit(t, "    on: Hold\n    to: Held\n", "    on: Hold\n    to: Held\n    set: {reason: by hand}\n"),
			breaks: 1,
			want:   []want{{subject: "rule Queued × Hold", what: `now to Held {reason="by hand"}, was to Held {reason="manual"}`, verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name:   "a row takes the state's field in place of the event's",
			old:    edit(t, "  - from: Held\n", "  - from: Held\n    on: Hold\n    to: Held\n    with: {reason: event.reason}\n  - from: Held\n"),
			new:    edit(t, "  - from: Held\n", "  - from: Held\n    on: Hold\n    to: Held\n    with: {reason: state.reason}\n  - from: Held\n"),
			breaks: 1,
			want:   []want{{subject: "rule Held × Hold", what: "now to Held {reason=state.reason}, was to Held {reason=event.reason}", verdicts: []string{"behaviour=breaks"}}},
		},
		{
			name:   "the initial state changed",
			old:    jobSpec,
			new:    edit(t, "  Queued:\n    initial: true\n", "  Queued:\n", "  Held:\n", "  Held:\n    initial: true\n"),
			breaks: 1,
			want:   []want{{subject: "initial state", what: "Held, was Queued", verdicts: []string{"behaviour=breaks"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := diff.Compare(machine(t, "old.yaml", tt.old), machine(t, "new.yaml", tt.new))
			var got []want
			for _, c := range rep.Changes {
				w := want{subject: c.Subject, what: c.What, declared: c.Declared != ""}
				for a := diff.SavedStates; a <= diff.Behaviour; a++ {
					if c.Verdicts[a] != diff.OK {
						w.verdicts = append(w.verdicts, a.Key()+"="+c.Verdicts[a].String())
						assert.NotEmpty(t, c.Why[a], "%s %s: why it is %s", c.Subject, c.What, c.Verdicts[a])
					}
				}
				if c.Old.Line == 0 && c.New.Line == 0 {
					t.Errorf("%s %s has no position", c.Subject, c.What)
				}
				got = append(got, w)
			}
			assert.ElementsMatch(t, tt.want, got)
			assert.Equal(t, tt.breaks, rep.Breaks(), "breaking changes")
			var unused []string
			for _, b := range rep.Unused {
				unused = append(unused, b.Change)
			}
			assert.Equal(t, tt.unused, unused, "declared breaks that name no change")
		})
	}
}
