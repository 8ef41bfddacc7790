// Command fsmgen compiles a state machine written as a YAML transition table
// into exhaustive Go code with typed states, events and actions, its
// table-driven tests, a Mermaid diagram and a Markdown transition table.
//
// Usage:
//
//	fsmgen generate [-werror] [-format F] SPEC...   write every output of each spec (only files whose bytes change)
//	fsmgen check [-werror] [-format F] SPEC...      verify every output is up to date; print a diff of stale ones, name missing ones
//	fsmgen diagram SPEC                             print the Mermaid diagram
//	fsmgen schema                                   print the JSON Schema of the spec language
//	fsmgen debug SPEC                               print the checked machine (storage, signatures, every rule's data flow)
//	fsmgen paths [-json] SPEC                       print each rule's witness path: the shortest events from New that fire it
//	fsmgen diff [-format F] [OLD] NEW               list what changed between two revisions of a spec (OLD: git:HEAD:NEW by default), and what each change breaks
//	fsmgen export -format xstate|scxml SPEC         print the machine as an XState v5 config (JSON) or an SCXML document
//
// fsmgen CMD -h prints the command's usage line and its flags.
//
// Output paths in a spec are relative to the spec file, so the result is
// the same from any working directory. Problems are reported as
// path:line:col: message, with the source line and a caret, and any notes
// that explain the problem as indented "note:" lines after them. Warnings
// do not stop generation unless -werror is given, which reports them as
// errors.
//
// Exit status: 0 when all is well, 1 for a spec error or a stale output,
// 2 for a usage error, 3 when fsmgen diff finds a change that breaks
// something the new spec does not declare under breaks:.
//
// # Comparing revisions
//
// fsmgen diff OLD NEW checks both revisions of a spec and lists every
// change between them: a state, event, action, field, guard, effect,
// timer, entry or exit, or rule added, removed, renamed (renamed_from) or
// changed. Each change has a verdict, ok, review or breaks, for four
// things: states saved by the old revision (m.Save, a database), events
// and actions saved by it (an event log), the hand-written Behavior and
// Handler, and the machine's behaviour. A retyped field is ok for saved
// data when every value its old type wrote loads as its new type (int32
// to int64, a string to a named string type), and a changed timer delay
// says that machines saved before keep their deadlines (docs/spec.md,
// "What loads"). OLD is a file, or git:REV:PATH for
// the file PATH (relative to the current directory) at commit REV, as in
//
//	fsmgen diff git:HEAD~1:spec/order.yaml spec/order.yaml
//
// An old revision that does not check against the module's packages as
// they are now (a package it imports moved or went) is checked against
// the module as commit REV had it, extracted into a temporary directory.
// A field retyped to a type whose JSON is alike (a type moved to another
// package, a named type for its underlying type) is ok for saved data and
// to review for the code.
//
// A change the new spec declares under breaks: is reported as declared
// and does not fail; one it declares that names no change is noted. A
// spec that OLD does not have is new: nothing was saved with it. -format
// json and -format sarif print the report as one document on stdout.
//
// # Exporting to other statechart tools
//
// fsmgen export -format xstate SPEC prints the machine as the JSON of an
// XState v5 machine config, to open in Stately's editor or run with
// createMachine; -format scxml prints a W3C SCXML document of the same
// chart. Guards, effects and actions are named, not implemented. What the
// target cannot run is reported on stderr: a construct it cannot express
// at all is an error (exit 1, nothing printed), one it keeps as metadata
// only (set: and with:, say) a warning naming it and its position.
// docs/export.md describes the mapping.
//
// # Output formats for CI
//
// -format text (the default) is the output described above, on stderr;
// check prints the diff of each stale output on stdout, and names each
// stale or missing output on stderr with the command that regenerates it
// (a missing output has no diff: it is the whole file). -format json and
// -format sarif print one document on stdout instead, and nothing else
// there ("wrote PATH" lines of generate go to stderr); the exit status is
// the same. Every problem has a rule: a stable kebab-case id such as
// unknown-name, unhandled-pair or unused-declaration (docs/spec.md lists
// them). In these formats a stale output of check is a finding too, with
// rule stale-output, at the output's path, saying to run fsmgen generate,
// in place of the diff. The document is printed even when fsmgen stops on
// a failure that is not a spec's problem (an unreadable spec, two specs
// writing one file): the failure is then in it as well as on stderr.
// Findings are sorted by file, line, column, severity and message, so
// the same input gives the same bytes.
//
// -format json prints an object:
//
//	{
//	  "diagnostics": [
//	    {
//	      "file": "door.yaml",          // the spec as given, or a generated file's path
//	      "line": 15,                   // from 1; 0 when the problem is the whole file
//	      "column": 9,                  // from 1, in characters; 0 when unknown
//	      "severity": "error",          // or "warning"
//	      "rule": "unknown-name",
//	      "message": "unknown state \"Opne\" (did you mean \"Open\"?)",
//	      "notes": []                   // more lines explaining the problem
//	    }
//	  ],
//	  "error": "read spec: ..."         // only when fsmgen stopped on a failure
//	}
//
// -format sarif prints a SARIF 2.1.0 log, as GitHub code scanning and
// other SARIF viewers read it: one run whose tool.driver (name fsmgen)
// lists the rules the results use, with their descriptions, help and
// default level; one result per finding with ruleId, ruleIndex, level,
// message (notes as extra lines, also as Markdown and in
// properties.notes), a location whose uri is relative to the current
// directory (with uriBaseId %SRCROOT%, so run fsmgen from the repository
// root; a file outside it gets an absolute file: URI) and whose region is
// the file's first line when the problem is the whole file (GitHub code
// scanning needs a startLine), and a partial fingerprint
// "fsmgen/v1": a SHA-256 of the rule, the uri and the message, with the
// occurrence number of the same triple after a colon, so a finding keeps
// its identity when lines move. Columns count Unicode code points
// (run.columnKind). A failure other than a spec's problem appears as
// invocations[0].executionSuccessful false with a tool execution
// notification.
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
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	// exitBreaks is the exit status of fsmgen diff when a change breaks
	// something the new spec does not declare.
	exitBreaks = 3
)

const usage = `usage:
  fsmgen generate [-werror] [-format text|json|sarif] SPEC...
  fsmgen check [-werror] [-format text|json|sarif] SPEC...
  fsmgen diagram SPEC
  fsmgen schema
  fsmgen debug SPEC
  fsmgen paths [-json] SPEC
  fsmgen diff [-format text|json|sarif] [OLD] NEW
  fsmgen export -format xstate|scxml SPEC
`

// commandHelp prints what "fsmgen CMD -h" asks for, on stdout: the
// command's usage line and its flags. It reports false, printing nothing,
// for a command fsmgen does not have.
func commandHelp(cmd string, fs *flag.FlagSet, stdout io.Writer) bool {
	lines := []string{"usage:"}
	for line := range strings.Lines(usage) {
		if strings.HasPrefix(line, "  fsmgen "+cmd+" ") || strings.TrimSpace(line) == "fsmgen "+cmd {
			lines = append(lines, strings.TrimRight(line, "\n"))
		}
	}
	if len(lines) == 1 {
		return false
	}
	fmt.Fprintln(stdout, strings.Join(lines, "\n"))
	fs.SetOutput(stdout)
	fs.PrintDefaults()
	return true
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the flags of generate and check.
type options struct {
	werror bool   // report warnings as errors, and fail on them
	format string // one of formats
}

// The output formats of generate and check.
const (
	formatText  = "text"
	formatJSON  = "json"
	formatSARIF = "sarif"
)

// formats are the values -format accepts.
var formats = []string{formatText, formatJSON, formatSARIF}

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
			fmt.Fprintln(stderr, "fsmgen:", strings.TrimSuffix(msg, ": "+errUsage.Error()))
		}
		fmt.Fprint(stderr, usage)
		return exitUsage
	case errors.Is(err, errReported):
		return exitError
	case errors.Is(err, errBreaks):
		return exitBreaks
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
	var o options
	if cmd == "generate" || cmd == "check" {
		fs.BoolVar(&o.werror, "werror", false, "treat warnings as errors")
	}
	if cmd == "export" {
		fs.StringVar(&o.format, "format", "", "the target: xstate or scxml")
	}
	if cmd == "generate" || cmd == "check" || cmd == "diff" {
		fs.StringVar(&o.format, "format", formatText, "output format: text, json or sarif")
	}
	asJSON := false
	if cmd == "paths" {
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) && commandHelp(cmd, fs, stdout) {
		return nil
	} else if err != nil && !errors.Is(err, flag.ErrHelp) {
		return fmt.Errorf("%s: %w: %w", cmd, err, errUsage)
	}
	args = fs.Args()
	switch cmd {
	case "generate", "check":
		if !slices.Contains(formats, o.format) {
			return fmt.Errorf("%s: -format %q is not one of text, json, sarif: %w", cmd, o.format, errUsage)
		}
		if len(args) == 0 {
			return fmt.Errorf("%s needs at least one spec file: %w", cmd, errUsage)
		}
		if o.format != formatText {
			return report(cmd == "check", o, args, stdout, stderr)
		}
		return generateOrCheck(cmd == "check", o.werror, args, stdout, stderr)
	case "diff":
		if !slices.Contains(formats, o.format) {
			return fmt.Errorf("diff: -format %q is not one of text, json, sarif: %w", o.format, errUsage)
		}
		oldSource, newPath, err := diffArgs(args)
		if err != nil {
			return err
		}
		return diffSpecs(o.format, oldSource, newPath, stdout, stderr)
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
	case "paths":
		if len(args) != 1 {
			return fmt.Errorf("paths needs exactly one spec file: %w", errUsage)
		}
		res, err := load(args, false, stderr)
		if err != nil {
			return err
		}
		return printPaths(stdout, res[0].Machine, asJSON)
	case "export":
		return exportSpec(o.format, args, stdout, stderr)
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
			printText(stderr, d, source(r, d))
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

// source returns the text diagnostic d of result r points into: the
// spec's, or another file's (a hand-written Go file of the output
// package), read from disk; nil when it cannot be read (no excerpt).
func source(r *generate.Result, d diag.Diagnostic) []byte {
	if d.Pos.File == "" || d.Pos.File == r.Spec {
		return r.Source
	}
	src, err := os.ReadFile(d.Pos.File)
	if err != nil {
		return nil
	}
	return src
}

// printText prints d as -format text does: "path:line:col: message", the
// line of src it points at with a caret, then its notes.
func printText(w io.Writer, d diag.Diagnostic, src []byte) {
	fmt.Fprintln(w, d)
	fmt.Fprint(w, diag.Excerpt(src, d))
	fmt.Fprint(w, d.NotesText())
}

// writeOutputs writes the outputs of results that changed (see
// generate.Write), and says "wrote PATH" on w for each file written, also
// those written before an error stopped the rest.
func writeOutputs(results []*generate.Result, w io.Writer) error {
	var outputs []generate.Output
	for _, r := range results {
		outputs = append(outputs, r.Outputs...)
	}
	wrote, err := generate.Write(outputs)
	for _, p := range wrote {
		fmt.Fprintln(w, "wrote", p)
	}
	return err
}

// generateOrCheck runs generate or check for -format text: diagnostics on
// stderr; for check, the diff of each stale output on stdout, and a line
// on stderr for each stale or missing output saying what to run.
func generateOrCheck(check, werror bool, paths []string, stdout, stderr io.Writer) error {
	results, err := load(paths, werror, stderr)
	if err != nil {
		return err
	}
	if !check {
		for _, r := range results {
			if len(r.Outputs) == 0 {
				// A spec with errors has none, and said so in load.
				fmt.Fprintf(stderr, "fsmgen: %s declares no output, so there is nothing to generate: add \"output: {go: .}\" to write its Go beside it (and diagram: and table: for its Mermaid diagram and Markdown table)\n", r.Spec)
				return errReported
			}
		}
		return writeOutputs(results, stdout)
	}
	failed := false
	for _, r := range results {
		stale, err := generate.Check(r.Outputs)
		if err != nil {
			return err
		}
		for _, s := range stale {
			failed = true
			if s.Missing {
				fmt.Fprintf(stderr, "fsmgen: %s is missing: run fsmgen generate %s\n", s.Path, r.Spec)
				continue
			}
			fmt.Fprint(stdout, s.Diff)
			fmt.Fprintf(stderr, "fsmgen: %s is stale: run fsmgen generate %s\n", s.Path, r.Spec)
		}
	}
	if failed {
		return errReported
	}
	return nil
}
