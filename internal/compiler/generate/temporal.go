package generate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/diff"
	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// revisionRecord is the JSON of a Temporal package's revision record: the
// spec its glue was last generated from, and the revisions that glue
// declares. Running workflows were started by some revision up to
// Revision; the next spec is compared with Spec to decide what they may
// move to.
type revisionRecord struct {
	Generated   string `json:"generated"`
	Machine     string `json:"machine"`
	Revision    int    `json:"revision"`
	MinRevision int    `json:"min_revision"`
	Spec        string `json:"spec"`
}

// recordNote is the record's first member, which marks it as fsmgen's.
const recordNote = emit.Header + " The spec of the revision the Temporal glue beside it runs, which fsmgen generate compares the next spec with: keep it in version control."

// temporal adds the Temporal glue of m and its revision record to res,
// or reports why the spec cannot move running workflows to it. The error
// is for failures other than the spec's and the record's own problems.
func temporal(res *Result, f *spec.File, m *fsm.Machine, src []byte) error {
	pos := f.Output.Temporal.Pos
	switch {
	case m.Output.GoDir == "":
		res.Diags.Errorf(pos, "output.temporal needs output.go: the workflow's package imports the machine's generated package")
		return nil
	case m.ImportPath == "":
		res.Diags.Errorf(pos, "output.temporal needs the generated package's import path: put the spec in a Go module (a go.mod above it)")
		return nil
	case !m.HasHandler():
		res.Diags.Errorf(pos, "output.temporal: %s has no actions, so nothing for a workflow to perform: give it actions, or drop output.temporal", m.Name)
		return nil
	case !token.IsIdentifier(emit.TemporalPackage(m)):
		res.Diags.Errorf(pos, "output.temporal: the directory's last element %q names the workflow's package and must be a Go identifier", emit.TemporalPackage(m))
		return nil
	}
	for _, a := range m.Actions {
		for _, fd := range a.Fields {
			if name := emit.UnexportedName(fd.GoType); name != "" {
				res.Diags.Errorf(fd.TypePos, "output.temporal: field %s of action %s has type %s, which package %s does not export: the workflow's package, which passes it to an activity, cannot name it; export the type", fd.Name, a.Name, name, m.Package)
			}
		}
	}
	if res.Diags.HasErrors() {
		return nil
	}
	dir := filepath.Dir(f.Path)
	recPath := filepath.Join(dir, filepath.FromSlash(emit.RevisionPath(m)))
	rec, err := readRecord(res, pos, recPath, m.Name)
	if rec == nil {
		return err
	}
	if rec.Spec != string(src) {
		// A record without a spec is a new workflow's: revision 1.
		if rec.Spec != "" && !next(res, pos, recPath, rec, f.Path, m) {
			return nil
		}
		rec.Spec = string(src)
	}
	glue, err := emit.Temporal(m, rec.Revision, rec.MinRevision)
	if err != nil {
		return err
	}
	data, err := rec.encode()
	if err != nil {
		return err
	}
	res.Outputs = append(res.Outputs,
		Output{Path: filepath.Join(dir, filepath.FromSlash(emit.TemporalPath(m))), Content: glue},
		Output{Path: recPath, Content: data})
	return nil
}

// next compares the recorded revision with the spec and moves rec to the
// spec's revision: the same when nothing the diff sees changed, the next
// one otherwise, and the next one for MinRevision too when a declared
// change breaks what running workflows saved, logged or do. It reports
// an undeclared breaking change, or a record whose spec no longer checks,
// and returns false.
func next(res *Result, pos diag.Pos, recPath string, rec *revisionRecord, specPath string, m *fsm.Machine) bool {
	name := fmt.Sprintf("%s (revision %d)", recPath, rec.Revision)
	old := OldRevision(specPath, name, []byte(rec.Spec))
	if old.Machine == nil {
		first := "it does not check"
		for _, d := range old.Diags {
			if d.Severity == diag.Error {
				first = d.String()
				break
			}
		}
		res.Diags.Errorf(pos, "output.temporal: the spec of revision %d, recorded in %s, does not check any more, so running workflows cannot be compared with this one: %s", rec.Revision, recPath, first)
		return false
	}
	rep := diff.Compare(old.Machine, m)
	if len(rep.Changes) == 0 {
		return true
	}
	if rep.Breaks() > 0 {
		for _, c := range rep.Changes {
			if !c.Breaks() {
				continue
			}
			at := c.New
			if at.File == "" {
				at = pos
			}
			var why []string
			for a, v := range c.Verdicts {
				if v == diff.Breaks {
					why = append(why, c.Why[a])
				}
			}
			res.Diags.Errorf(at, "%s: %s breaks the workflows running revision %d of %s: %s; declare it under breaks: (workflows of revision %d and older then stop at their next workflow task: let them finish first), or undo it",
				c.Subject, c.What, rec.Revision, m.Name, strings.Join(why, "; "), rec.Revision)
		}
		return false
	}
	rec.Revision++
	for _, c := range rep.Changes {
		if c.Declared != "" && (c.Verdicts[diff.SavedStates] == diff.Breaks || c.Verdicts[diff.EventLog] == diff.Breaks || c.Verdicts[diff.Behaviour] == diff.Breaks) {
			rec.MinRevision = rec.Revision
		}
	}
	return true
}

// readRecord reads the revision record at path, strictly; a missing one
// is revision 1 of a new workflow. A record that is not one is reported
// in res; the error is for a file that cannot be read. Either way the
// record is nil.
func readRecord(res *Result, pos diag.Pos, path, machine string) (*revisionRecord, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &revisionRecord{Generated: recordNote, Machine: machine, Revision: 1, MinRevision: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the revision record: %w", err)
	}
	var rec revisionRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		res.Diags.Errorf(pos, "output.temporal: %s is not a revision record (%v): fsmgen generate writes it; restore it from version control, or delete it to start the workflow's revisions again at 1 (running workflows then fail their next task)", path, err)
		return nil, nil
	}
	switch {
	case rec.Machine != machine:
		res.Diags.Errorf(pos, "output.temporal: %s records machine %q, not %s: give each machine a directory of its own", path, rec.Machine, machine)
		return nil, nil
	case rec.MinRevision < 1 || rec.Revision < rec.MinRevision:
		res.Diags.Errorf(pos, "output.temporal: %s records revisions %d to %d, not 1 ≤ min_revision ≤ revision: fsmgen generate writes it; restore it from version control", path, rec.MinRevision, rec.Revision)
		return nil, nil
	}
	rec.Generated = recordNote
	return &rec, nil
}

// encode writes the record as JSON whose first line carries fsmgen's
// header, so that generate may replace it.
func (r *revisionRecord) encode() ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the revision record: %w", err)
	}
	data = bytes.Replace(data, []byte("{\n  "), []byte("{"), 1)
	return append(data, '\n'), nil
}
