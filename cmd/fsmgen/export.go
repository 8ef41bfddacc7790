package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/export"
)

// exportSpec runs fsmgen export: the spec's machine in format on stdout,
// what the format cannot express on stderr. An error among those prints
// nothing on stdout and fails.
func exportSpec(format string, args []string, stdout, stderr io.Writer) error {
	if !slices.Contains(export.Formats, export.Format(format)) {
		return fmt.Errorf("export: -format %q is not one of xstate, scxml: %w", format, errUsage)
	}
	if len(args) != 1 {
		return fmt.Errorf("export needs exactly one spec file: %w", errUsage)
	}
	res, err := load(args, false, stderr)
	if err != nil {
		return err
	}
	out, diags, err := export.Export(res[0].Machine, export.Format(format))
	if err != nil {
		return err
	}
	for _, d := range diags {
		printText(stderr, d, res[0].Source)
	}
	if diags.HasErrors() {
		return errReported
	}
	_, err = stdout.Write(out)
	return err
}
