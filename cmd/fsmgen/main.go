// Command fsmgen compiles a state machine written as a YAML transition table
// into exhaustive Go code with typed states, events and actions, its
// table-driven tests, a Mermaid diagram and a Markdown transition table.
//
// Usage:
//
//	fsmgen generate [-werror] SPEC...   write every output of each spec (only files whose bytes change)
//	fsmgen check [-werror] SPEC...      verify every output is up to date; print a diff of stale ones
//	fsmgen diagram SPEC                 print the Mermaid diagram
//	fsmgen schema                       print the JSON Schema of the spec language
//	fsmgen debug SPEC                   print the checked machine (storage, signatures, every rule's data flow)
//
// Output paths in a spec are relative to the spec file, so the result is
// the same from any working directory. Problems are reported as
// path:line:col: message, with the source line and a caret. Warnings do
// not stop generation unless -werror is given.
//
// Exit status: 0 when all is well, 1 for a spec error or a stale output,
// 2 for a usage error.
//
// From another module, add fsmgen as a tool and generate with one line in a
// hand-written file of the package:
//
//	go get -tool github.com/fsmgen/fsmgen/cmd/fsmgen
//	//go:generate go tool fsmgen generate orders.yaml
//
// The spec's imports are loaded from the module that holds the spec, to
// check that field types name types. The spec language is described in
// docs/spec.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/emit"
	"github.com/fsmgen/fsmgen/internal/fsm"
	"github.com/fsmgen/fsmgen/internal/generate"
	"github.com/fsmgen/fsmgen/internal/spec"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usage = `usage:
  fsmgen generate [-werror] SPEC...
  fsmgen check [-werror] SPEC...
  fsmgen diagram SPEC
  fsmgen schema
  fsmgen debug SPEC
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage marks a usage error (exit status 2).
var errUsage = errors.New("usage")

// errReported marks a failure already reported to stderr (exit status 1).
var errReported = errors.New("reported")

func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		if msg := err.Error(); msg != errUsage.Error() {
			fmt.Fprintln(stderr, "fsmgen:", msg)
		}
		fmt.Fprint(stderr, usage)
		return exitUsage
	case errors.Is(err, errReported):
		return exitError
	default:
		fmt.Fprintln(stderr, "fsmgen:", err)
		return exitError
	}
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	werror := false
	if cmd == "generate" || cmd == "check" {
		fs.BoolVar(&werror, "werror", false, "treat warnings as errors")
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w: %w", cmd, err, errUsage)
	}
	args = fs.Args()
	switch cmd {
	case "generate", "check":
		if len(args) == 0 {
			return fmt.Errorf("%s needs at least one spec file: %w", cmd, errUsage)
		}
		return generateOrCheck(cmd == "check", werror, args, stdout, stderr)
	case "diagram", "debug":
		if len(args) != 1 {
			return fmt.Errorf("%s needs exactly one spec file: %w", cmd, errUsage)
		}
		res, err := load(args, false, stderr)
		if err != nil {
			return err
		}
		if cmd == "debug" {
			fsm.Dump(stdout, res[0].Machine)
			return nil
		}
		out, err := emit.Mermaid(res[0].Machine)
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	case "schema":
		if len(args) != 0 {
			return fmt.Errorf("schema takes no arguments: %w", errUsage)
		}
		_, err := stdout.Write(spec.Schema)
		return err
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q: %w", cmd, errUsage)
}

// load runs the pipeline for the specs and reports their diagnostics. It
// fails when any spec has errors (or, with werror, warnings).
func load(paths []string, werror bool, stderr io.Writer) ([]*generate.Result, error) {
	results, err := generate.LoadAll(paths)
	if err != nil {
		return nil, err
	}
	failed := false
	for _, r := range results {
		for _, d := range r.Diags {
			if werror {
				d.Severity = diag.Error
			}
			fmt.Fprintln(stderr, d)
			fmt.Fprint(stderr, diag.Excerpt(r.Source, d))
		}
		if r.Machine == nil || werror && len(r.Diags) > 0 {
			failed = true
		}
	}
	if failed {
		return nil, errReported
	}
	return results, nil
}

func generateOrCheck(check, werror bool, paths []string, stdout, stderr io.Writer) error {
	results, err := load(paths, werror, stderr)
	if err != nil {
		return err
	}
	var outputs []generate.Output
	for _, r := range results {
		outputs = append(outputs, r.Outputs...)
	}
	if !check {
		wrote, err := generate.Write(outputs)
		for _, p := range wrote {
			fmt.Fprintln(stdout, "wrote", p)
		}
		return err
	}
	stale, err := generate.Check(outputs)
	if err != nil {
		return err
	}
	for _, s := range stale {
		fmt.Fprint(stdout, s.Diff)
		fmt.Fprintf(stderr, "fsmgen: %s is stale: run fsmgen generate (make generate)\n", s.Path)
	}
	if len(stale) > 0 {
		return errReported
	}
	return nil
}
