package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/diff"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// errBreaks marks a diff that found a break (exit status 3).
var errBreaks = errors.New("breaks")

// diffSpecs runs fsmgen diff OLD NEW: it checks both revisions, compares
// them and reports every change with its verdicts, in format.
func diffSpecs(format, oldSource, newPath string, stdout, stderr io.Writer) error {
	newSrc, _, exists, err := generate.ReadRevision(newPath)
	if err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("read %s: no such file", newPath)
	}
	oldSrc, _, oldExists, err := generate.ReadRevision(oldSource)
	if err != nil {
		return err
	}
	newRes := generate.Revision(newPath, newPath, newSrc)
	var oldRes *generate.Result
	if oldExists {
		oldRes = generate.OldRevision(newPath, oldSource, oldSrc)
	}
	failed := false
	for _, r := range []*generate.Result{oldRes, newRes} {
		if r == nil {
			continue
		}
		for _, d := range r.Diags {
			if d.Severity == diag.Error {
				printText(stderr, d, r.Source)
			}
		}
		failed = failed || r.Machine == nil
	}
	if failed {
		fmt.Fprintln(stderr, "fsmgen: diff compares two revisions that check: fix the errors above")
		return errReported
	}
	var rep *diff.Report
	if oldRes == nil {
		// A new spec: nothing was saved with an older revision.
		rep = &diff.Report{}
	} else {
		rep = diff.Compare(oldRes.Machine, newRes.Machine)
	}
	switch format {
	case formatJSON:
		err = writeDiffJSON(stdout, oldSource, newPath, oldExists, rep)
	case formatSARIF:
		err = writeSARIF(stdout, diffFindings(rep), nil)
	default:
		writeDiffText(stdout, oldSource, newPath, oldExists, rep)
	}
	if err != nil {
		return err
	}
	if rep.Breaks() > 0 {
		return errBreaks
	}
	return nil
}

// writeDiffText prints the report as -format text does: a summary line,
// then each change with its position and the verdicts that are not ok.
func writeDiffText(w io.Writer, oldSource, newPath string, oldExists bool, rep *diff.Report) {
	if !oldExists {
		fmt.Fprintf(w, "%s is new (%s has no such spec): nothing was saved with an older revision\n", newPath, oldSource)
		return
	}
	declared := 0
	for _, c := range rep.Changes {
		if c.Declared != "" {
			declared++
		}
	}
	fmt.Fprintf(w, "%s -> %s: %s, %d breaking, %d declared\n", oldSource, newPath, diag.Count(len(rep.Changes), "change"), rep.Breaks(), declared)
	for _, c := range rep.Changes {
		fmt.Fprintf(w, "%s: %s: %s%s: %s\n", changePos(c), c.Subject, c.What, wasAt(c), changeVerdict(c))
		for a := diff.SavedStates; a <= diff.Behaviour; a++ {
			if c.Verdicts[a] != diff.OK || c.Why[a] != "" {
				fmt.Fprintf(w, "\t%s: %s", a, c.Verdicts[a])
				if c.Why[a] != "" {
					fmt.Fprintf(w, ": %s", c.Why[a])
				}
				fmt.Fprintln(w)
			}
		}
		if c.Declared != "" {
			fmt.Fprintf(w, "\tdeclared: %s\n", c.Declared)
		}
	}
	for _, b := range rep.Unused {
		fmt.Fprintf(w, "%s: note: breaks declares %q, which names no breaking change from %s: remove it\n", b.Pos, b.Change, oldSource)
	}
}

// changePos is where a change is: in the new revision, or in the old one
// for what it removed.
func changePos(c *diff.Change) diag.Pos {
	if c.New.Line > 0 {
		return c.New
	}
	return c.Old
}

// wasAt says where the subject was in the old revision, when it is in
// both.
func wasAt(c *diff.Change) string {
	if c.New.Line > 0 && c.Old.Line > 0 {
		return " (was at " + c.Old.String() + ")"
	}
	return ""
}

// changeVerdict sums a change up: "breaks", "breaks (declared)", "review"
// or "ok".
func changeVerdict(c *diff.Change) string {
	worst := diff.OK
	for _, v := range c.Verdicts {
		if v == diff.Breaks || (v == diff.Review && worst == diff.OK) {
			worst = v
		}
	}
	if worst == diff.Breaks && c.Declared != "" {
		return "breaks (declared)"
	}
	return worst.String()
}

// jsonDiff is the document of fsmgen diff -format json.
type jsonDiff struct {
	Old     string           `json:"old"`
	New     string           `json:"new"`
	OldSpec bool             `json:"old_exists"`
	Breaks  int              `json:"breaks"`
	Changes []jsonChange     `json:"changes"`
	Unused  []jsonUnusedDecl `json:"unused_breaks,omitempty"`
}

// jsonChange is one change of -format json.
type jsonChange struct {
	Subject  string            `json:"subject"`
	What     string            `json:"what"`
	Old      *jsonPos          `json:"old,omitempty"`
	New      *jsonPos          `json:"new,omitempty"`
	Verdicts map[string]string `json:"verdicts"`
	Why      map[string]string `json:"why,omitempty"`
	Declared string            `json:"declared,omitempty"`
	Breaks   bool              `json:"breaks"`
}

// jsonPos is a position of -format json.
type jsonPos struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// jsonUnusedDecl is a declared break that names no change.
type jsonUnusedDecl struct {
	Change string   `json:"change"`
	Why    string   `json:"why"`
	At     *jsonPos `json:"at"`
}

func jsonPosOf(p diag.Pos) *jsonPos {
	if p.Line == 0 {
		return nil
	}
	return &jsonPos{File: p.File, Line: p.Line, Column: p.Col}
}

// writeDiffJSON prints the report as one JSON document.
func writeDiffJSON(w io.Writer, oldSource, newPath string, oldExists bool, rep *diff.Report) error {
	doc := jsonDiff{Old: oldSource, New: newPath, OldSpec: oldExists, Breaks: rep.Breaks(), Changes: []jsonChange{}}
	for _, c := range rep.Changes {
		jc := jsonChange{Subject: c.Subject, What: c.What, Old: jsonPosOf(c.Old), New: jsonPosOf(c.New), Verdicts: map[string]string{}, Declared: c.Declared, Breaks: c.Breaks()}
		for a := diff.SavedStates; a <= diff.Behaviour; a++ {
			jc.Verdicts[a.Key()] = c.Verdicts[a].String()
			if c.Why[a] != "" {
				if jc.Why == nil {
					jc.Why = map[string]string{}
				}
				jc.Why[a.Key()] = c.Why[a]
			}
		}
		doc.Changes = append(doc.Changes, jc)
	}
	for _, b := range rep.Unused {
		doc.Unused = append(doc.Unused, jsonUnusedDecl{Change: b.Change, Why: b.Why, At: jsonPosOf(b.Pos)})
	}
	return encode(w, doc)
}

// diffFindings turns the report's changes into findings, for SARIF: an
// error for each breaking change, a warning for each one to review or
// declared.
func diffFindings(rep *diff.Report) diag.List {
	var l diag.List
	for _, c := range rep.Changes {
		var why []string
		for a := diff.SavedStates; a <= diff.Behaviour; a++ {
			if c.Verdicts[a] != diff.OK {
				why = append(why, fmt.Sprintf("%s: %s: %s", a, c.Verdicts[a], c.Why[a]))
			}
		}
		if len(why) == 0 {
			continue
		}
		msg := fmt.Sprintf("%s %s%s", c.Subject, c.What, wasAt(c))
		switch {
		case c.Breaks():
			l.Errorf(changePos(c), "breaking change: %s", msg)
		case c.Declared != "":
			l.Warnf(changePos(c), "declared breaking change: %s (declared: %s)", msg, c.Declared)
		default:
			// Only a new event that states take through "*" is reviewed.
			l.Warnf(changePos(c), "the new event %s reaches a state through \"*\": %s", strings.TrimPrefix(c.Subject, "event "), c.Why[diff.Behaviour])
		}
		for _, n := range why {
			l.Note(n)
		}
	}
	for _, b := range rep.Unused {
		l.Warnf(b.Pos, "breaks declares %q, which names no breaking change: remove it", b.Change)
	}
	l.Sort()
	return l
}

// diffArgs checks fsmgen diff's arguments and returns OLD and NEW: with
// NEW alone, OLD is NEW as the last commit has it (git:HEAD:NEW, NEW
// taken relative to the current directory).
func diffArgs(args []string) (oldSource, newPath string, err error) {
	if len(args) != 1 && len(args) != 2 {
		return "", "", fmt.Errorf("diff needs a spec as it is now, NEW, and the revision to compare it with, OLD (a file, or git:REV:PATH; git:HEAD:NEW when left out): %w", errUsage)
	}
	newPath = args[len(args)-1]
	if strings.HasPrefix(newPath, "git:") {
		return "", "", fmt.Errorf("diff: NEW is the spec as it is now, a file: %w", errUsage)
	}
	if len(args) == 2 {
		return args[0], newPath, nil
	}
	rel := newPath
	if filepath.IsAbs(rel) {
		wd, err := os.Getwd()
		if err != nil {
			return "", "", fmt.Errorf("diff: %w", err)
		}
		if rel, err = filepath.Rel(wd, newPath); err != nil {
			return "", "", fmt.Errorf("diff: %s is not below the current directory: name OLD (git:REV:PATH): %w", newPath, errUsage)
		}
	}
	return "git:HEAD:" + rel, newPath, nil
}
