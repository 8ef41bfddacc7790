package fsm

// Generated lists every top-level identifier fsmgen declares in a
// generated package (its Go file and its test file), besides those derived
// from the spec: the types of its states, events and actions and their
// kind constants. It is the one list of them: the checker refuses a spec
// name that would collide with one, and the emitter's tests check that the
// generated files declare nothing else.
var Generated = []string{
	// The package's API.
	"Action", "ActionKind", "Behavior", "Config", "Event", "EventKind", "Handler", "Load", "LoadOptions", "LoadWith", "Machine", "New",
	"Recorder", "RejectedError", "Restore", "Rule", "Rules", "State", "StateKind", "Step", "TimerID",
	"UnmarshalAction", "UnmarshalEvent", "UnmarshalState",
	// Its unexported helpers.
	"fsmActionDecoders", "fsmActionNames", "fsmData", "fsmDesc", "fsmEventDecoders", "fsmEventNames", "fsmNew",
	"fsmRunning", "fsmStateDecoders", "fsmStateKinds", "fsmStateKindsWas", "fsmStateNames", "fsmDefers",
	"fsmHeld", "fsmHolds", "fsmTakes",
	// The generated tests.
	"TestDeferral", "TestEveryPair", "TestExamples", "TestFieldAccessors", "TestJSON", "TestMachineErrors", "TestPaths", "TestRandomSequences",
	"TestRecorder", "TestRules", "TestSaved", "fsmBehavior", "fsmFake", "fsmSubject",
}

// Values are the identifiers of Generated that name functions, variables
// or constants: a field type may name a generated type, never one of
// these.
var Values = []string{
	"Load", "LoadWith", "New", "Restore", "Rules", "UnmarshalAction", "UnmarshalEvent", "UnmarshalState",
	"fsmActionDecoders", "fsmActionNames", "fsmDesc", "fsmEventDecoders", "fsmEventNames", "fsmNew", "fsmRunning",
	"fsmStateDecoders", "fsmStateKinds", "fsmStateKindsWas", "fsmStateNames", "fsmDefers",
	"fsmHeld", "fsmHolds", "fsmTakes",
	"TestDeferral", "TestEveryPair", "TestExamples", "TestFieldAccessors", "TestJSON", "TestMachineErrors", "TestPaths", "TestRandomSequences",
	"TestRecorder", "TestRules", "TestSaved", "fsmBehavior", "fsmSubject",
}

// Members are the names of the methods and fields generated types declare
// beside the ones the spec names: a field of a state, event or action
// must not be called Kind or MarshalJSON, and no action Actions (the
// Recorder's field).
var Members = map[string]string{
	"Kind":        "the Kind method of every state, event and action",
	"MarshalJSON": "the MarshalJSON method of every state, event and action",
}
