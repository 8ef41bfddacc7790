package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/gittest"
)

// lampSpec is a lamp; the diff tests change it.
const lampSpec = `version: 2
machine: Lamp
package: lamp
states:
  Off:
    initial: true
    fields:
      watts: {type: int}
  On:
    fields:
      watts: {type: int}
events:
  Flip: {}
transitions:
  - from: Off
    on: Flip
    to: On
  - from: On
    on: Flip
    to: Off
`

// lampRetyped retypes the lamp's field, which breaks what it saved.
var lampRetyped = strings.ReplaceAll(lampSpec, "watts: {type: int}", "watts: {type: int16}")

// lampDeclared retypes it and declares the break.
var lampDeclared = strings.Replace(lampRetyped, "transitions:\n", "breaks:\n  - change: field Off.watts\n    why: no lamp draws 32 kW.\n  - change: field On.watts\n    why: the same.\ntransitions:\n", 1)

// TestDiffExitStatus runs fsmgen diff on pairs of revisions and checks
// its exit status and what it prints.
func TestDiffExitStatus(t *testing.T) {
	tests := []struct {
		name     string
		old, new string // "" writes no file
		args     []string
		code     int
		stdout   []string
		stderr   []string
	}{
		{name: "the same", old: lampSpec, new: lampSpec, code: exitOK, stdout: []string{"old.yaml -> new.yaml: 0 changes, 0 breaking, 0 declared\n"}},
		{name: "documentation only", old: lampSpec, new: strings.Replace(lampSpec, "  Flip: {}\n", "  Flip:\n    doc: The switch is flipped.\n", 1), code: exitOK, stdout: []string{": 0 changes"}},
		{name: "a compatible change", old: lampSpec, new: strings.Replace(lampSpec, "  Flip: {}\n", "  Flip:\n    fields:\n      by: {type: string}\n", 1), code: exitOK, stdout: []string{
			": 1 change, 0 breaking",
			"new.yaml:15:7: field Flip.by: added: ok\n\tevent log: ok: an event log of the old revision of event Flip loads with by as its zero value\n",
		}},
		{name: "a break", old: lampSpec, new: lampRetyped, code: exitBreaks, stdout: []string{
			"2 changes, 2 breaking, 0 declared",
			"new.yaml:8:21: field Off.watts: retyped from int to int16 (was at old.yaml:8:21): breaks\n\tsaved states: breaks: a state saved by the old revision of state Off holds watts as int, which may not load as int16",
		}},
		{name: "a declared break", old: lampSpec, new: lampDeclared, code: exitOK, stdout: []string{"2 changes, 0 breaking, 2 declared", ": breaks (declared)\n", "\tdeclared: no lamp draws 32 kW.\n"}},
		{name: "a declared break that names no change", old: lampSpec, new: strings.Replace(lampSpec, "transitions:\n", "breaks:\n  - change: state Dim\n    why: gone.\ntransitions:\n", 1), code: exitOK, stdout: []string{`new.yaml:15:5: note: breaks declares "state Dim", which names no breaking change from old.yaml: remove it`}},
		{name: "a new spec", old: "", new: lampSpec, code: exitOK, stdout: []string{"new.yaml is new (old.yaml has no such spec)"}},
		{name: "an old revision that does not check", old: strings.Replace(lampSpec, "to: Off", "to: Of", 1), new: lampSpec, code: exitError, stderr: []string{`old.yaml:20:9: unknown state "Of"`, "diff compares two revisions that check"}},
		{name: "a new revision missing", old: lampSpec, new: "", code: exitError, stderr: []string{"read new.yaml: no such file"}},
		{name: "three revisions", args: []string{"diff", "old.yaml", "new.yaml", "new.yaml"}, code: exitUsage, stderr: []string{"diff needs a spec as it is now, NEW, and the revision to compare it with, OLD"}},
		{name: "NEW alone, outside git", new: lampSpec, args: []string{"diff", "new.yaml"}, code: exitError, stderr: []string{`git:HEAD:new.yaml: git knows no commit "HEAD" here`}},
		{name: "NEW from git", args: []string{"diff", "old.yaml", "git:HEAD:new.yaml"}, code: exitUsage, stderr: []string{"NEW is the spec as it is now"}},
		{name: "an unknown format", args: []string{"diff", "-format", "xml", "old.yaml", "new.yaml"}, code: exitUsage, stderr: []string{`-format "xml" is not one of`}},
		{name: "not git:REV:PATH", old: lampSpec, new: lampSpec, args: []string{"diff", "git:HEAD", "new.yaml"}, code: exitError, stderr: []string{`"git:HEAD" is not git:REV:PATH`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, src := range map[string]string{"old.yaml": tt.old, "new.yaml": tt.new} {
				if src != "" {
					require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
				}
			}
			args := tt.args
			if args == nil {
				args = []string{"diff", "old.yaml", "new.yaml"}
			}
			code, stdout, stderr := cli(t, dir, args...)
			assert.Equal(t, tt.code, code, "exit status; stdout:\n%s\nstderr:\n%s", stdout, stderr)
			for _, s := range tt.stdout {
				assert.Contains(t, stdout, s)
			}
			for _, s := range tt.stderr {
				assert.Contains(t, stderr, s)
			}
			if tt.stderr == nil {
				assert.Empty(t, stderr)
			}
		})
	}
}

// TestDiffGit compares revisions of a spec in a git repository, as CI
// does: the previous commit's with the file, a commit without the spec,
// and a commit git does not know.
func TestDiffGit(t *testing.T) {
	gittest.IsolateGit(t)
	repo := gittest.NewRepo(t, map[string]string{"README": "lamps\n"})
	gittest.WriteFile(t, repo, "specs/lamp.yaml", lampSpec)
	gittest.Git(t, repo, "add", "--all")
	gittest.Git(t, repo, "commit", "--quiet", "-m", "a lamp")
	gittest.WriteFile(t, repo, "specs/lamp.yaml", lampRetyped)
	gittest.Git(t, repo, "commit", "--quiet", "-am", "watts as int16")

	code, stdout, stderr := cli(t, repo, "diff", "git:HEAD~1:specs/lamp.yaml", "specs/lamp.yaml")
	assert.Equal(t, exitBreaks, code, stderr)
	assert.Contains(t, stdout, "git:HEAD~1:specs/lamp.yaml -> specs/lamp.yaml: 2 changes, 2 breaking")
	assert.Contains(t, stdout, "specs/lamp.yaml:8:21: field Off.watts: retyped from int to int16 (was at git:HEAD~1:specs/lamp.yaml:8:21): breaks")

	// From a subdirectory, PATH is relative to it.
	code, _, stderr = cli(t, filepath.Join(repo, "specs"), "diff", "git:HEAD~1:lamp.yaml", "lamp.yaml")
	assert.Equal(t, exitBreaks, code, stderr)

	code, stdout, stderr = cli(t, repo, "diff", "git:HEAD~2:specs/lamp.yaml", "specs/lamp.yaml")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "specs/lamp.yaml is new (git:HEAD~2:specs/lamp.yaml has no such spec)")

	code, _, stderr = cli(t, repo, "diff", "git:HEAD~9:specs/lamp.yaml", "specs/lamp.yaml")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, `git knows no commit "HEAD~9" here`)

	// NEW alone: OLD is the last commit's, named relative to the current
	// directory, from its path as given or made absolute.
	code, stdout, stderr = cli(t, repo, "diff", "specs/lamp.yaml")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "git:HEAD:specs/lamp.yaml -> specs/lamp.yaml: 0 changes")
	gittest.WriteFile(t, repo, "specs/lamp.yaml", lampSpec)
	for _, path := range []string{"lamp.yaml", filepath.Join(repo, "specs", "lamp.yaml")} {
		code, stdout, stderr = cli(t, filepath.Join(repo, "specs"), "diff", path)
		assert.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "git:HEAD:lamp.yaml -> "+path+": 2 changes, 0 breaking")
		assert.Contains(t, stdout, "retyped from int16 to int (was at git:HEAD:lamp.yaml:8:21)")
	}
}

// TestDiffFormats checks the JSON and SARIF documents of a diff with a
// break, a declared break and a change to review.
func TestDiffFormats(t *testing.T) {
	dir := t.TempDir()
	withDim := strings.Replace(lampDeclared, "  Flip: {}\n", "  Flip: {}\n  Dim: {}\n", 1)
	withDim = strings.Replace(withDim, "  On:\n", "  On:\n    reject: \"*\"\n", 1)
	withDim = strings.Replace(withDim, "    initial: true\n", "    initial: true\n    ignore: [Dim]\n", 1)
	withDim = strings.Replace(withDim, "  - change: field On.watts\n    why: the same.\n", "", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old.yaml"), []byte(lampSpec), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new.yaml"), []byte(withDim), 0o644))

	code, stdout, stderr := cli(t, dir, "diff", "-format", "json", "old.yaml", "new.yaml")
	require.Equal(t, exitBreaks, code, stderr)
	var doc jsonDiff
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.Equal(t, 1, doc.Breaks)
	byWhat := map[string]jsonChange{}
	for _, c := range doc.Changes {
		byWhat[c.Subject+" "+c.What] = c
	}
	on := byWhat["field On.watts retyped from int to int16"]
	assert.True(t, on.Breaks)
	assert.Equal(t, map[string]string{"saved_states": "breaks", "event_log": "ok", "code": "ok", "behaviour": "ok"}, on.Verdicts)
	assert.Equal(t, &jsonPos{File: "old.yaml", Line: 11, Column: 21}, on.Old)
	assert.Equal(t, &jsonPos{File: "new.yaml", Line: 13, Column: 21}, on.New)
	off := byWhat["field Off.watts retyped from int to int16"]
	assert.False(t, off.Breaks)
	assert.Equal(t, "no lamp draws 32 kW.", off.Declared)
	dim := byWhat["event Dim added"]
	assert.Equal(t, "review", dim.Verdicts["behaviour"])
	assert.Contains(t, dim.Why["behaviour"], `On rejects it through "reject: *"`)

	code, stdout, stderr = cli(t, dir, "diff", "-format", "sarif", "old.yaml", "new.yaml")
	require.Equal(t, exitBreaks, code, stderr)
	validateSARIF(t, stdout)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID  string `json:"ruleId"`
				Level   string `json:"level"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &log))
	require.Len(t, log.Runs, 1)
	var got []string
	for _, r := range log.Runs[0].Results {
		got = append(got, r.RuleID+" "+r.Level+" "+strings.SplitN(r.Message.Text, "\n", 2)[0])
	}
	assert.ElementsMatch(t, []string{
		"declared-break warning declared breaking change: field Off.watts retyped from int to int16 (was at old.yaml:8:21) (declared: no lamp draws 32 kW.)",
		"breaking-change error breaking change: field On.watts retyped from int to int16 (was at old.yaml:11:21)",
		`new-event-through-star warning the new event Dim reaches a state through "*": On rejects it through "reject: *": if that is wrong, give the state a rule for Dim`,
	}, got)
}
