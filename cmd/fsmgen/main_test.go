package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the script tests run fsmgen as a command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fsmgen": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script: each asserts the
// output, stderr and exit status of fsmgen commands.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}
