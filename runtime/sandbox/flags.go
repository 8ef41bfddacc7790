package sandbox

// The agent's flags that configure the sandbox, named in the messages of
// this package so that a user knows what to change.
const (
	// FlagExpose names a path commands may see although it is hidden
	// ([Options.Expose]).
	FlagExpose = "sandbox-expose"
)
