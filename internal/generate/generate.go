// Package generate runs fsmgen's pipeline for spec files on disk: read,
// parse, check, emit, then write the files whose bytes changed or, in check
// mode, report the stale ones with a diff. It is the only part of fsmgen
// that touches the file system.
package generate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/emit"
	"github.com/fsmgen/fsmgen/internal/fsm"
	"github.com/fsmgen/fsmgen/internal/spec"
)

// Output is a generated file with its path on disk.
type Output struct {
	Path    string // the spec's directory joined with the file's spec-relative path
	Content []byte
}

// Result is what one spec produced.
type Result struct {
	Spec    string
	Source  []byte
	Machine *fsm.Machine // nil when the spec has errors
	Diags   diag.List
	Outputs []Output
}

// Load reads, parses and checks the spec at path and emits its files. A
// spec with errors yields its diagnostics and no outputs; the returned
// error is for failures other than the spec's own problems.
func Load(path string) (*Result, error) {
	res := &Result{Spec: path}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("read spec %s: not a regular file", path)
	}
	if info.Size() > spec.MaxSize {
		res.Diags.Errorf(diag.Pos{File: path}, "spec is %d bytes, larger than the %d-byte limit: split the machine or trim its docs", info.Size(), spec.MaxSize)
		return res, nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	res.Source = src
	f, diags := spec.Parse(path, src)
	res.Diags = diags
	if f == nil || diags.HasErrors() {
		return res, nil
	}
	m, diags := fsm.Build(f)
	res.Diags = append(res.Diags, diags...)
	res.Diags.Sort()
	if m == nil {
		return res, nil
	}
	res.Machine = m
	files, err := emit.All(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	for _, file := range files {
		res.Outputs = append(res.Outputs, Output{Path: filepath.Join(dir, filepath.FromSlash(file.Path)), Content: file.Content})
	}
	return res, nil
}

// LoadAll loads every spec and reports two specs writing the same file.
func LoadAll(paths []string) ([]*Result, error) {
	var results []*Result
	owner := map[string]string{}
	for _, p := range paths {
		r, err := Load(p)
		if err != nil {
			return nil, err
		}
		for _, o := range r.Outputs {
			abs, err := filepath.Abs(o.Path)
			if err != nil {
				return nil, fmt.Errorf("resolve output path: %w", err)
			}
			if prev, ok := owner[abs]; ok && prev != p {
				return nil, fmt.Errorf("%s and %s both generate %s: give one of them another output path", prev, p, o.Path)
			}
			owner[abs] = p
		}
		results = append(results, r)
	}
	return results, nil
}

// Write writes each output whose content differs from the file on disk,
// atomically, and returns the paths it wrote.
func Write(outputs []Output) ([]string, error) {
	var wrote []string
	for _, o := range outputs {
		old, err := os.ReadFile(o.Path)
		if err == nil && bytes.Equal(old, o.Content) {
			continue
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return wrote, fmt.Errorf("read %s: %w", o.Path, err)
		}
		if err := writeAtomic(o.Path, o.Content); err != nil {
			return wrote, err
		}
		wrote = append(wrote, o.Path)
	}
	return wrote, nil
}

// writeAtomic writes data to a temporary file beside path and renames it
// into place, so that a reader never sees half a file.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Stale is an output whose file on disk differs from what generation
// would write.
type Stale struct {
	Path string
	Diff string // unified diff from the file on disk to the generated content
}

// Check compares each output with the file on disk and returns the stale
// ones, with diffs, in output order.
func Check(outputs []Output) ([]Stale, error) {
	var stale []Stale
	for _, o := range outputs {
		old, err := os.ReadFile(o.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			old = nil
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", o.Path, err)
		case bytes.Equal(old, o.Content):
			continue
		}
		diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A:        difflib.SplitLines(string(old)),
			B:        difflib.SplitLines(string(o.Content)),
			FromFile: o.Path + " (on disk)",
			ToFile:   o.Path + " (generated)",
			Context:  3,
		})
		if err != nil {
			return nil, fmt.Errorf("diff %s: %w", o.Path, err)
		}
		if old == nil {
			diff = "--- " + o.Path + " is missing\n" + diff
		}
		stale = append(stale, Stale{Path: o.Path, Diff: diff})
	}
	return stale, nil
}
