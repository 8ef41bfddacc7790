// Package fsmrt is the runtime of the state machines fsmgen generates:
// what every generated package shares, written once here, so that a
// generated file holds only its own machine (its types, its switch and its
// tables).
//
// A program that uses a generated machine meets a few names of this
// package: [ErrRejected], which every machine's rejection wraps
//
//	if errors.Is(err, fsmrt.ErrRejected) { ... }
//
// and, through the aliases a generated package declares (its Rule, Step
// and RejectedError), [Rule], [Step] and [RejectedError]. [NewCoverage]
// records which rules of a machine fire, for a program's own tests.
//
// Everything else ([Core], [Desc], the JSON helpers, the version checks)
// is for generated code only: it is exported because generated packages
// live outside this one, and it may change with fsmgen's generated code,
// which checks at compile time that it was generated for this version of
// the package (see [MinVersion]). The drivers of the tests fsmgen
// generates are in package fsmtest, beneath this one, so that a program
// that runs a machine does not link the testing package.
package fsmrt

// The versions of generated code this package supports. A generated file
// states the version it was written for, GenVersion at the time, in two
// constant conversions that fail to compile when the package and the file
// do not match:
//
//	const (
//		_ = fsmrt.RegenerateWithNewerFsmgen(7 - fsmrt.MinVersion)
//		_ = fsmrt.UpgradeFsmgenRuntime(fsmrt.MaxVersion - 7)
//	)
//
// A file older than MinVersion fails with "constant -1 overflows
// fsmrt.RegenerateWithNewerFsmgen": run the fsmgen of this module's
// version on its spec again. A file newer than MaxVersion fails with
// "constant -1 overflows fsmrt.UpgradeFsmgenRuntime": require the version
// of github.com/fsmgen/fsmgen that generated it.
const (
	// Version is the version of fsmgen, which generated files name in
	// their header.
	Version = "v0.3.0"
	// GenVersion is the version of the code the fsmgen of this module
	// generates. Version 4's tests may check a way's whole state
	// (fsmtest.Way.After), for the constants rules set; version 5's
	// machines may remember histories (Desc.History, SaveHistory,
	// LoadStateHistory); version 6's may defer events (RuleDefer,
	// Desc.DeferLimit, Core.Defer, Recall, SaveDeferred, LoadDeferred);
	// version 7's tell the observer of a region's ignore beside other
	// regions' rules (Core.Beside, Core.IgnoreAll).
	GenVersion = 7
	// MinVersion is the oldest version of generated code this package
	// supports.
	MinVersion = 3
	// MaxVersion is the newest version of generated code this package
	// supports.
	MaxVersion = GenVersion
)

// RegenerateWithNewerFsmgen is the type of the check that a generated file
// is not older than this package supports. Its name is the compiler's
// message when the check fails.
type RegenerateWithNewerFsmgen uint

// UpgradeFsmgenRuntime is the type of the check that this package is not
// older than a generated file needs. Its name is the compiler's message
// when the check fails.
type UpgradeFsmgenRuntime uint
