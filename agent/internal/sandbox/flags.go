package sandbox

// The agent's flags that configure the sandbox, named in the messages of
// this package so that a user knows what to change.
const (
	// FlagExpose names a path commands may see although it is hidden
	// ([Options.Expose]).
	FlagExpose = "sandbox-expose"
	// The flags of the fields of [Limits], named in the notes of a limit
	// reached ([Process.LimitNote]).
	FlagMemory    = "sandbox-memory"
	FlagProcesses = "sandbox-processes"
	FlagCPU       = "sandbox-cpu"
	FlagFileSize  = "sandbox-file-size"
	FlagTmpSize   = "sandbox-tmp-size"
	FlagDisk      = "sandbox-disk"
)
