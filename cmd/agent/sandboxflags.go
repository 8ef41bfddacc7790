package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fsmgen/fsmgen/runtime/mask"
	"github.com/fsmgen/fsmgen/runtime/redact"
	"github.com/fsmgen/fsmgen/runtime/sandbox"
	"github.com/fsmgen/fsmgen/runtime/tools"
)

// sandboxFlags are the flags that shape bash's sandbox beyond -sandbox and
// -sandbox-network: what of the home directory commands see.
type sandboxFlags struct {
	expose exposures
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
}

// apply sets the sandbox's options from the flags.
func (f *sandboxFlags) apply(opt *sandbox.Options) {
	opt.Expose = append(sandbox.DefaultExpose(nil), f.expose...)
}

// maskWorkspace scans the workspace for files holding the API key, masks
// them from the tools, and says what it found and what the sandbox hides
// that commands may need.
func maskWorkspace(ctx context.Context, ws *tools.Workspace, sb *sandbox.Sandbox, key string, stderr io.Writer) error {
	set, err := mask.Scan(ctx, ws.Root(), redact.New(key), mask.Options{})
	if err != nil {
		return err
	}
	ws.SetMasked(set)
	if names := set.Names(); len(names) > 0 {
		fmt.Fprintf(stderr, "agent: masked from the model (they hold the API key): %s\n", strings.Join(names, ", "))
	}
	if large := set.TooLarge(); len(large) > 0 {
		fmt.Fprintf(stderr, "agent: not scanned for the API key (over %d MiB; read_file still checks what it returns): %s\n",
			mask.DefaultMaxFileBytes>>20, listShort(large, 5))
	}
	if dirs := sb.HiddenPATH(); len(dirs) > 0 {
		fmt.Fprintf(stderr, "agent: bash does not see these directories of your PATH (show them with -%s): %s\n",
			sandbox.FlagExpose, strings.Join(dirs, ", "))
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
