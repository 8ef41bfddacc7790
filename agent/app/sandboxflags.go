package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/internal/mask"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// sandboxFlags are the flags that shape bash's sandbox beyond -sandbox and
// -sandbox-network: what of the home directory commands see, and the
// limits of what they use.
type sandboxFlags struct {
	expose                          exposures
	memory, fileSize, tmpSize, disk limitSize
	processes                       int
	cpu                             time.Duration
}

// limitSize is a size flag of a limit: a byteSize, or 0 for no limit.
type limitSize int64

// Set implements flag.Value.
func (l *limitSize) Set(s string) error {
	if strings.TrimSpace(s) == "0" {
		*l = 0
		return nil
	}
	var b byteSize
	if err := b.Set(s); err != nil {
		return fmt.Errorf("%q is not a size: give a number of bytes, e.g. 512MiB or 2GiB, or 0 for no limit", s)
	}
	*l = limitSize(b)
	return nil
}

// String implements flag.Value.
func (l *limitSize) String() string {
	if *l == 0 {
		return "0"
	}
	b := byteSize(*l)
	return b.String()
}

// exposures is the repeatable -sandbox-expose flag.
type exposures []sandbox.Exposure

// String implements flag.Value.
func (e *exposures) String() string {
	var s []string
	for _, x := range *e {
		s = append(s, x.String())
	}
	return strings.Join(s, ",")
}

// Set implements flag.Value: each use adds a path.
func (e *exposures) Set(s string) error {
	x, err := sandbox.ParseExposure(s)
	if err != nil {
		return err
	}
	*e = append(*e, x)
	return nil
}

// register defines the flags in fs.
func (f *sandboxFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.expose, sandbox.FlagExpose, "show sandboxed bash commands this `path` of your home directory (they see an empty home): read-only, or writable with :rw, e.g. ~/.cargo/bin or ~/.npm:rw; repeatable")
	d := sandbox.DefaultLimits()
	f.memory, f.fileSize, f.tmpSize, f.disk = limitSize(d.Memory), limitSize(d.FileSize), limitSize(d.TmpSize), limitSize(d.Disk)
	fs.Var(&f.memory, sandbox.FlagMemory, "the `size` of the memory each process of a sandboxed command may allocate (its data, RLIMIT_DATA), e.g. 2GiB; 0 for no limit")
	fs.IntVar(&f.processes, sandbox.FlagProcesses, d.Processes, "the `number` of processes and threads a sandboxed command may have at once; 0 for no limit")
	fs.DurationVar(&f.cpu, sandbox.FlagCPU, d.CPU, "the CPU `time` each process of a sandboxed command may use; 0 for no limit")
	fs.Var(&f.fileSize, sandbox.FlagFileSize, "the `size` of the largest file a sandboxed command may write, e.g. 4GiB; 0 for no limit")
	fs.Var(&f.tmpSize, sandbox.FlagTmpSize, "the `size` of a sandboxed command's private /tmp, which is kept in memory; 0 for no limit")
	fs.Var(&f.disk, sandbox.FlagDisk, "the `size` a sandboxed command may write to the disk (the workspace, its cache), all its files together: past it the command is stopped; 0 for no limit")
}

// check reports a flag with a value out of range, in the user's terms.
func (f *sandboxFlags) check() error {
	switch {
	case f.processes < 0:
		return fmt.Errorf("-%s must be 0 (no limit) or more", sandbox.FlagProcesses)
	case f.cpu < 0:
		return fmt.Errorf("-%s must be 0 (no limit) or more", sandbox.FlagCPU)
	}
	return nil
}

// apply sets the sandbox's options from the flags.
func (f *sandboxFlags) apply(opt *sandbox.Options) {
	opt.Expose = append(sandbox.DefaultExpose(nil), f.expose...)
	opt.Limits = &sandbox.Limits{Memory: int64(f.memory), Processes: f.processes, CPU: f.cpu,
		FileSize: int64(f.fileSize), TmpSize: int64(f.tmpSize), Disk: int64(f.disk)}
}

// maskWorkspace scans the workspace for files holding the API key and
// for the agent's own event logs and journals (and their locks), masks
// them from the tools and from bash, and says what it found.
func maskWorkspace(ctx context.Context, ws *tools.Workspace, key string, stderr io.Writer) error {
	set, err := mask.Scan(ctx, ws.Root(), redact.New(key), mask.Options{Own: isOwnFile})
	if err != nil {
		return err
	}
	maskOwnLocks(set)
	ws.SetMasked(set)
	own := set.OwnNames()
	if names := slices.DeleteFunc(set.Names(), func(n string) bool { return slices.Contains(own, n) }); len(names) > 0 {
		fmt.Fprintf(stderr, "agent: masked from the model (they hold the API key): %s\n", strings.Join(names, ", "))
	}
	if len(own) > 0 {
		fmt.Fprintf(stderr, "agent: masked from the model (the agent's own event logs, journals and locks, which hold whole conversations): %s\n", listShort(own, 5))
	}
	if large := set.TooLarge(); len(large) > 0 {
		fmt.Fprintf(stderr, "agent: not scanned for the API key (over %d MiB; read_file still checks what it returns): %s\n",
			mask.DefaultMaxFileBytes>>20, listShort(large, 5))
	}
	return nil
}

// listShort joins the first n of names and says how many more there are.
func listShort(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
