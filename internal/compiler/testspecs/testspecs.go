// Package testspecs finds the specs in the repository that tests use as
// inputs and fuzz seeds: the real specs under spec/ and examples/, the spec
// of every golden archive, and the invalid specs of the checker's tests.
package testspecs

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Spec is a spec file's name and contents.
type Spec struct {
	Name string
	Src  []byte
}

// Valid returns spec/*.yaml, the examples' specs and the spec.yaml of
// every golden archive, given the repository's root.
func Valid(root string) ([]Spec, error) {
	specs, err := files(filepath.Join(root, "spec", "*.yaml"))
	if err != nil {
		return nil, err
	}
	examples, err := files(filepath.Join(root, "examples", "*", "*.yaml"))
	if err != nil {
		return nil, err
	}
	specs = append(specs, examples...)
	archives, err := filepath.Glob(filepath.Join(root, "internal", "compiler", "emit", "testdata", "golden", "*.txtar"))
	if err != nil {
		return nil, fmt.Errorf("find golden archives: %w", err)
	}
	sort.Strings(archives)
	for _, p := range archives {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			return nil, fmt.Errorf("read golden archive: %w", err)
		}
		for _, f := range ar.Files {
			if f.Name == "spec.yaml" {
				specs = append(specs, Spec{Name: p, Src: f.Data})
			}
		}
	}
	return specs, nil
}

// Invalid returns the specs of the checker's error tests.
func Invalid(root string) ([]Spec, error) {
	return files(filepath.Join(root, "internal", "compiler", "fsm", "testdata", "errors", "*.yaml"))
}

// All returns Valid and Invalid together.
func All(root string) ([]Spec, error) {
	valid, err := Valid(root)
	if err != nil {
		return nil, err
	}
	invalid, err := Invalid(root)
	return append(valid, invalid...), err
}

func files(glob string) ([]Spec, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return nil, fmt.Errorf("find specs: %w", err)
	}
	if len(paths) == 0 {
		// A glob that finds nothing is a folder that moved: the tests
		// that take these as inputs would pass on nothing.
		return nil, fmt.Errorf("find specs: none matches %s", glob)
	}
	sort.Strings(paths)
	var out []Spec
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read spec: %w", err)
		}
		out = append(out, Spec{Name: p, Src: src})
	}
	return out, nil
}

// FromArchives returns the spec.yaml of each txtar archive at paths (the
// conformance corpus), named by the archive.
func FromArchives(t testing.TB, paths []string) []Spec {
	t.Helper()
	var out []Spec
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatalf("read archive: %v", err)
		}
		for _, f := range ar.Files {
			if f.Name == "spec.yaml" {
				out = append(out, Spec{Name: p, Src: f.Data})
			}
		}
	}
	return out
}

// WaitingRegions returns a machine whose parallel state Run has n regions,
// each starting in a state that waits on a guard of its own (a health
// probe each, say): the step that enters Run asks every guard in each of
// its microsteps. Off --Go--> Run enters it; Healthy<i> --Go--> Checking<i>
// waits again.
func WaitingRegions(n int) []byte {
	var sb strings.Builder
	sb.WriteString("version: 2\nmachine: Probes\npackage: probes\noutput:\n  go: out\nstates:\n  Off: {initial: true}\n  Run:\n    parallel: true\n    states:\n")
	for i := range n {
		fmt.Fprintf(&sb, "      R%d:\n        states:\n          Checking%d: {initial: true, ignore: [Go]}\n          Healthy%d: {}\n", i, i, i)
	}
	sb.WriteString("events: {Go: {}, Stop: {}}\nguards:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  healthy%d: {}\n", i)
	}
	sb.WriteString("transitions:\n  - {from: Off, on: Go, to: Run}\n  - {from: Off, on: Stop, ignore: true}\n  - {from: Run, on: Stop, to: Off}\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {from: Healthy%d, on: Go, to: Checking%d}\n  - from: Checking%d\n    guards: [{if: healthy%d, to: Healthy%d}]\n", i, i, i, i, i)
	}
	return []byte(sb.String())
}
