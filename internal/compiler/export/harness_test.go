package export_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// The harness of the differential test: the Go side builds every spec's
// generated package into one program in a temporary module, the XState
// side runs testdata/xstate/run.mjs with the XState that
// testdata/xstate/package-lock.json pins, the SCXML side
// testdata/scxml/run.cjs with SCION (testdata/scxml/package-lock.json),
// both installed once into the user's cache directory.

// module is the temporary module's path.
const module = "example.com/exportdiff"

//go:embed testdata/adapter.go.tmpl
var adapterSource string

//go:embed testdata/gomod/driver/driver.go
var driverSource []byte

var adapterTemplate = template.Must(template.New("adapter").Parse(adapterSource))

// adapterData is what the adapter template is given.
type adapterData struct {
	Package     string
	Imports     []string // import specs: `time "time"`
	Guards      []adapterFunc
	Effects     []adapterFunc
	Initial     string // the initial leaf's Go type
	InitialKind string // and its JSON kind
	InitialData bool   // the initial leaf has fields, which New's Config carries
	// InitialParallel: the initial leaf is a parallel state, whose value
	// names its regions' states, which New chooses; InitialLeaves: one
	// that waits, or whose regions start in transient states, whose
	// eventless rules New may take out of it.
	InitialParallel, InitialLeaves bool
	Behavior                       string // "Behavior: fsmExportBehavior{c.d}, " when the Config has a Behavior
	Timers                         bool
	Parallels                      []adapterParallel
	// Waiting are the parallel states that wait: the adapter records the
	// leaves of their regions as their own rules leave them.
	Waiting []adapterParallel
}

// adapterParallel is a parallel state: its Go type and the fields that
// name its regions' leaves.
type adapterParallel struct {
	Type   string
	Kind   string // its StateKind constant
	Fields []string
	// Regions are the indexes of its regions in the machine's rgn.
	Regions []int
	// Hosts are the kinds of the parallel states inside its regions,
	// which name no leaf of the chart.
	Hosts []string
}

// adapterFunc is one method of the adapter's Behavior, as Go fragments.
type adapterFunc struct {
	GoName  string
	Name    string // the spec name, quoted
	Params  string // "peer string, n int"
	Results string // "r0 int, r1 time.Duration"
}

// adapterFile writes the adapter of machine m's package.
func adapterFile(m *fsm.Machine) ([]byte, error) {
	d := adapterData{Package: m.Package, Initial: m.Initial.GoName, InitialKind: m.Initial.Snake,
		InitialData: len(m.Initial.Fields) > 0 && m.Initial.Regions == nil, InitialParallel: m.Initial.Regions != nil, InitialLeaves: m.Initial.Awaits() && m.Initial.Waits || startsEventless(m.Initial), Timers: len(m.Timers) > 0}
	for _, s := range m.States {
		if s.Regions == nil {
			continue
		}
		p := adapterParallel{Type: s.GoName, Kind: s.KindName}
		for _, reg := range s.Flat {
			p.Fields, p.Regions = append(p.Fields, reg.Field), append(p.Regions, reg.Index)
			if reg.Within != nil && !slices.Contains(p.Hosts, reg.Within.KindName) {
				p.Hosts = append(p.Hosts, reg.Within.KindName)
			}
		}
		d.Parallels = append(d.Parallels, p)
		if s.Waits || leavesQuietly(m, s) {
			d.Waiting = append(d.Waiting, p)
		}
	}
	if m.HasBehavior() {
		d.Behavior = "Behavior: fsmExportBehavior{c.d}, "
	}
	var types []string
	for _, fns := range [][]*fsm.Func{m.Guards, m.Effects} {
		for _, fn := range fns {
			if !fn.Used() {
				continue
			}
			f := adapterFunc{GoName: fn.GoName, Name: strconv.Quote(fn.Name)}
			var params, results []string
			for _, r := range fn.Reads {
				params = append(params, r.Param+" "+r.Type)
				types = append(types, r.Type)
			}
			for i, s := range fn.Sets {
				results = append(results, fmt.Sprintf("r%d %s", i, s.Type))
				types = append(types, s.Type)
			}
			f.Params, f.Results = strings.Join(params, ", "), strings.Join(results, ", ")
			if fn.Kind == fsm.Guard {
				d.Guards = append(d.Guards, f)
			} else {
				d.Effects = append(d.Effects, f)
			}
		}
	}
	for _, imp := range m.Imports {
		used := regexp.MustCompile(`\b` + regexp.QuoteMeta(imp.Alias) + `\.`)
		if slices.ContainsFunc(types, used.MatchString) {
			d.Imports = append(d.Imports, imp.Alias+" "+strconv.Quote(imp.Path))
		}
	}
	var b bytes.Buffer
	if err := adapterTemplate.Execute(&b, d); err != nil {
		return nil, err
	}
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w in:\n%s", err, b.Bytes())
	}
	return out, nil
}

// goProgram writes the temporary module: each spec's generated package
// (its Go files as fsmgen generates them, the hand-written files of its
// directory, and the adapter), the driver and a main that hands every
// machine to it; it builds the program and returns its path.
func goProgram(t *testing.T, specs map[string]*generate.Result) string {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	gomod := "module " + module + "\n\ngo 1.26\n\nrequire github.com/fsmgen/fsmgen v0.0.0\n\nreplace github.com/fsmgen/fsmgen => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "driver"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "driver", "driver.go"), driverSource, 0o644))
	var keys []string
	for key := range specs {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	var main bytes.Buffer
	main.WriteString("// Code generated by the export's differential test. DO NOT EDIT.\n\npackage main\n\nimport (\n")
	fmt.Fprintf(&main, "\t%q\n", module+"/driver")
	for _, key := range keys {
		res := specs[key]
		pkg := filepath.Join(dir, "m", key)
		require.NoError(t, os.MkdirAll(pkg, 0o755))
		goDir := filepath.Join(filepath.Dir(res.Spec), filepath.FromSlash(res.Machine.Output.GoDir))
		for _, o := range res.Outputs {
			if strings.HasSuffix(o.Path, ".go") && !strings.HasSuffix(o.Path, "_test.go") && filepath.Clean(filepath.Dir(o.Path)) == filepath.Clean(goDir) {
				require.NoError(t, os.WriteFile(filepath.Join(pkg, filepath.Base(o.Path)), o.Content, 0o644))
			}
		}
		hand, err := filepath.Glob(filepath.Join(goDir, "*.go"))
		require.NoError(t, err)
		for _, f := range hand {
			if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "_gen.go") {
				continue
			}
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(pkg, filepath.Base(f)), src, 0o644))
		}
		adapter, err := adapterFile(res.Machine)
		require.NoError(t, err, "the adapter of %s", key)
		require.NoError(t, os.WriteFile(filepath.Join(pkg, "export_adapter.go"), adapter, 0o644))
		fmt.Fprintf(&main, "\t%s %q\n", key, module+"/m/"+key)
	}
	main.WriteString(")\n\nfunc main() {\n\tdriver.Main(map[string]func(*driver.Driver) driver.Machine{\n")
	for _, key := range keys {
		fmt.Fprintf(&main, "\t\t%q: %s.FsmExportMachine,\n", key, key)
	}
	main.WriteString("\t})\n}\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), main.Bytes(), 0o644))
	bin := filepath.Join(dir, "run")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = dir
	// -trimpath keys the build cache by contents, not by this directory,
	// which is new at every run.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -trimpath", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build of the generated machines:\n%s", out)
	return bin
}

// npmRunner returns the path of a copy of the runner of testdata/NAME
// (its file runner) beside a node_modules with the packages of
// testdata/NAME/package-lock.json. It installs them with npm ci the first
// time, into the user's cache directory, keyed by the lock file's hash;
// later runs need no network. The copy's name holds the hash of its code,
// so that tests of other checkouts sharing the cache never run each
// other's runner. Without node or npm the test fails: the differential
// test is the export's proof.
func npmRunner(t *testing.T, name, runner string) string {
	t.Helper()
	_, err := exec.LookPath("node")
	require.NoError(t, err, "the differential test needs node (20 or later) on PATH")
	src := filepath.Join("testdata", name)
	pkg, err := os.ReadFile(filepath.Join(src, "package.json"))
	require.NoError(t, err)
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	require.NoError(t, err)
	code, err := os.ReadFile(filepath.Join(src, runner))
	require.NoError(t, err)
	sum := sha256.Sum256(append(slices.Clone(pkg), lock...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir() // no home directory: a cache that lasts until reboot
	}
	dir := filepath.Join(cache, "fsmgen", "export-"+name+"-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		_, err := exec.LookPath("npm")
		require.NoError(t, err, "the packages of %s are not installed in %s yet, and npm is not on PATH to install them", src, dir)
		require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
		tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
		require.NoError(t, err)
		defer os.RemoveAll(tmp)
		require.NoError(t, os.WriteFile(filepath.Join(tmp, "package.json"), pkg, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(tmp, "package-lock.json"), lock, 0o644))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts")
		cmd.Dir = tmp
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm ci of %s:\n%s", src, out)
		// Another test process may have installed them meanwhile: either
		// copy is the same.
		if err := os.Rename(tmp, dir); err != nil {
			_, statErr := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
			require.NoError(t, statErr, "install %s into %s: %v", src, dir, err)
		}
	}
	codeSum := sha256.Sum256(code)
	ext := filepath.Ext(runner)
	path := filepath.Join(dir, strings.TrimSuffix(runner, ext)+"-"+hex.EncodeToString(codeSum[:8])+ext)
	if _, err := os.Stat(path); err != nil {
		tmp, err := os.CreateTemp(dir, "runner-*")
		require.NoError(t, err)
		_, err = tmp.Write(code)
		require.NoError(t, errors.Join(err, tmp.Close()))
		require.NoError(t, os.Rename(tmp.Name(), path))
	}
	return path
}

// runNode runs a runner on the input and returns its output.
func runNode(t *testing.T, runner string, input []byte) []byte {
	t.Helper()
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "in.json"), filepath.Join(tmp, "out.json")
	require.NoError(t, os.WriteFile(in, input, 0o644))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", runner, in, out)
	cmd.Dir = filepath.Dir(runner)
	stderr, err := cmd.CombinedOutput()
	require.NoError(t, err, "node %s:\n%s", filepath.Base(runner), stderr)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	return data
}

// runProgram runs the Go program on the walks and returns its results.
func runProgram(t *testing.T, bin string, walks []byte) []byte {
	t.Helper()
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "walks.json"), filepath.Join(tmp, "results.json")
	require.NoError(t, os.WriteFile(in, walks, 0o644))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	stderr, err := exec.CommandContext(ctx, bin, in, out).CombinedOutput()
	require.NoError(t, err, "the Go machines' program:\n%s", stderr)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	return data
}

// leavesQuietly reports whether an eventless rule of a state inside a
// region of parallel state p, or the done transition of a composite state
// inside one, leaves p: goTrace reads the leaves it leaves, which a deep
// history remembers.
func leavesQuietly(m *fsm.Machine, p *fsm.State) bool {
	return slices.ContainsFunc(m.AllRules(), func(r *fsm.Rule) bool { return quietLeave(r, p) })
}

// quietLeave reports whether rule r is the eventless rule of a state
// inside a region of parallel state p, or the done transition of a
// composite state inside one, that leaves p (Rule.Source).
func quietLeave(r *fsm.Rule, p *fsm.State) bool {
	return r.From == p && r.Source != nil && r.Event == nil && r.Done != p
}
