package conformance

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// prepared is a case generated and translated for the driver.
type prepared struct {
	c *corpusCase
	// err is a problem of the case itself: a spec that should build and
	// does not, a script that does not parse.
	err error
	// buildErrors are the patterns of a case that must not build, and
	// diags what the generator reported.
	buildErrors []scriptLine
	diags       diag.List
	m           *fsm.Machine
	steps       []step
}

// step is one script line, translated: an operation for the driver or a
// check of what the operations did.
type step struct {
	line  scriptLine
	op    *op
	check *check
}

// op mirrors driver.Op.
type op struct {
	Op      string            `json:"op"`
	Data    json.RawMessage   `json:"data,omitempty"`
	Name    string            `json:"name,omitempty"`
	Answer  bool              `json:"answer,omitempty"`
	Results []json.RawMessage `json:"results,omitempty"`
}

// check is a want line, with its expectation in the form the checks
// compare: actions, calls and timers as rendered text, a state as its
// name and canonical JSON.
type check struct {
	what     string // actions, calls, state, timers, error
	items    []string
	state    string
	fields   string // canonical JSON of the state's fields; "" to check the name only
	rejected bool
	re       *regexp.Regexp
}

// prepare generates the case's machine into dir/cases/<name> and
// translates its script. A case whose script wants build errors gets no
// Go files.
func prepare(t *testing.T, dir string, c *corpusCase) *prepared {
	p := &prepared{c: c}
	for _, l := range c.lines {
		if l.verb == "want build error" {
			p.buildErrors = append(p.buildErrors, l)
		}
	}
	if p.buildErrors != nil && len(p.buildErrors) != len(c.lines) {
		p.err = fmt.Errorf("%s: a case that wants build errors has nothing else in its script", c.path)
		return p
	}
	pkgDir := filepath.Join(dir, "cases", c.name)
	require.NoError(t, os.MkdirAll(pkgDir, 0o755))
	specPath := filepath.Join(pkgDir, "spec.yaml")
	require.NoError(t, os.WriteFile(specPath, c.spec, 0o644))
	res, err := generate.Load(specPath)
	require.NoError(t, err)
	p.diags = res.Diags
	if p.buildErrors != nil {
		return p
	}
	if res.Machine == nil {
		p.err = fmt.Errorf("%s: the spec does not build:\n%s", c.path, res.Diags.Error())
		return p
	}
	p.m = res.Machine
	if !p.m.HasHandler() {
		p.err = fmt.Errorf("%s: the spec declares no actions: the harness watches a machine through its Recorder", c.path)
		return p
	}
	wrote := false
	for _, o := range res.Outputs {
		if strings.HasSuffix(o.Path, "_gen.go") && filepath.Dir(o.Path) == pkgDir {
			require.NoError(t, os.WriteFile(o.Path, o.Content, 0o644))
			wrote = true
		}
	}
	if !wrote {
		p.err = fmt.Errorf("%s: the spec must generate its Go code beside itself: output: {go: .}", c.path)
		return p
	}
	adapter, err := adapterFile(p.m)
	require.NoError(t, err, "%s: the adapter", c.path)
	require.NoError(t, os.WriteFile(filepath.Join(pkgDir, "conformance_adapter.go"), adapter, 0o644))
	mdl := newModel(p.m)
	for _, l := range c.lines {
		s, err := mdl.translate(l)
		if err != nil {
			p.err = fmt.Errorf("%s: %w", l.pos, err)
			return p
		}
		p.steps = append(p.steps, s)
	}
	// Guards and effects may be set first, for New's entries; the first
	// operation on the machine makes it.
	i := slices.IndexFunc(p.steps, func(s step) bool { return s.op == nil || s.op.Op == "send" || s.op.Op == "new" || s.op.Op == "restore" })
	if i < 0 || p.steps[i].op == nil || p.steps[i].op.Op == "send" {
		p.err = fmt.Errorf("%s: a script makes its machine with new or restore before it sends or checks anything", c.path)
	}
	return p
}

// checkBuildErrors checks a case that must not build: every error the
// generator reports matches a want build error line, and every line
// matches an error. The patterns match "LINE:COL: MESSAGE".
func checkBuildErrors(t *testing.T, p *prepared) {
	require.NoError(t, p.err)
	errs := p.diags.Errors()
	require.NotEmpty(t, errs, "%s: the spec builds, but the script wants build errors", p.c.path)
	var texts []string
	for _, d := range errs {
		texts = append(texts, fmt.Sprintf("%d:%d: %s", d.Pos.Line, d.Pos.Col, d.Msg))
	}
	matched := make([]bool, len(texts))
	for _, l := range p.buildErrors {
		re, err := regexp.Compile(l.arg)
		require.NoError(t, err, "%s", l)
		found := false
		for i, text := range texts {
			if re.MatchString(text) {
				found, matched[i] = true, true
			}
		}
		assert.True(t, found, "%s: no build error matches; the generator reported:\n%s", l, strings.Join(texts, "\n"))
	}
	for i, text := range texts {
		assert.True(t, matched[i], "%s: build error that no want build error line expects: %s", p.c.path, text)
	}
}

// buildAndRun writes the program that runs every case, builds it once
// and runs it. A case whose package does not compile is left out (its
// compiler output is in buildFailed) and the program built again
// without it.
func buildAndRun(t *testing.T, dir string, cases []*prepared) (map[string][]record, map[string]string) {
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "driver"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "driver", "driver.go"), driverSource, 0o644))
	buildFailed := map[string]string{}
	input := map[string][]op{}
	var names []string
	for _, p := range cases {
		if p.err != nil {
			continue
		}
		names = append(names, p.c.name)
		for _, s := range p.steps {
			if s.op != nil {
				input[p.c.name] = append(input[p.c.name], *s.op)
			}
		}
	}
	bin := filepath.Join(dir, "run")
	caseRE := regexp.MustCompile(`cases/([a-z][a-z0-9_]*)/`)
	for {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), mainFile(names), 0o644))
		out, err := goCommand(dir, "build", "-o", bin, ".")
		if err == nil {
			break
		}
		var broken []string
		for _, m := range caseRE.FindAllStringSubmatch(out, -1) {
			if slices.Contains(names, m[1]) && !slices.Contains(broken, m[1]) {
				broken = append(broken, m[1])
			}
		}
		require.NotEmpty(t, broken, "go build failed outside the generated packages: %v\n%s", err, out)
		for _, name := range broken {
			buildFailed[name] = out
			names = slices.DeleteFunc(names, func(n string) bool { return n == name })
			delete(input, name)
		}
	}
	data, err := json.Marshal(map[string]any{"cases": input})
	require.NoError(t, err)
	in, out := filepath.Join(dir, "input.json"), filepath.Join(dir, "output.json")
	require.NoError(t, os.WriteFile(in, data, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, in, out)
	stderr, err := cmd.CombinedOutput()
	require.NoError(t, err, "the conformance program failed:\n%s", stderr)
	data, err = os.ReadFile(out)
	require.NoError(t, err)
	var results struct {
		Cases map[string][]record `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &results))
	return results.Cases, buildFailed
}

// goCommand runs the go command in dir, offline, and returns its
// combined output. -trimpath keys the build cache by the packages'
// contents and import paths rather than their directory, which is new at
// every run: a run builds only the cases that changed since the last one.
func goCommand(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -trimpath", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mainFile is the program that hands each case's machine to the driver.
func mainFile(names []string) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by the conformance harness (internal/compiler/conformance). DO NOT EDIT.\n\npackage main\n\nimport (\n")
	fmt.Fprintf(&b, "\t%q\n", module+"/driver")
	for i, n := range names {
		fmt.Fprintf(&b, "\tc%d %q\n", i, module+"/cases/"+n)
	}
	b.WriteString(")\n\nfunc main() {\n\tdriver.Main(map[string]func(*driver.Driver) driver.Machine{\n")
	for i, n := range names {
		fmt.Fprintf(&b, "\t\t%q: c%d.FsmConfMachine,\n", n, i)
	}
	b.WriteString("\t})\n}\n")
	return b.Bytes()
}

// adapterData is what the adapter template is given.
type adapterData struct {
	Package string
	Imports []string // import specs: `time "time"`
	Guards  []adapterFunc
	Effects []adapterFunc
	Initial string // the initial leaf's Go type
	// InitialData is set when the initial leaf has fields, which New's
	// Config carries.
	InitialData bool
	Behavior    string // "Behavior: fsmConfBehavior{c.d}, " when the Config has a Behavior
	Timers      bool
}

// adapterFunc is one method of the scripted Behavior, as Go fragments.
type adapterFunc struct {
	GoName  string
	Name    string   // the spec name, quoted
	Params  string   // "peer string, n int"
	Names   string   // `"peer", "n"`: the spec names of the reads
	Args    string   // "peer, n"
	Results string   // "int, time.Duration"
	Vars    []string // "fsmConfR0 int"
	Ptrs    string   // "&fsmConfR0, &fsmConfR1"
	Rets    string   // "fsmConfR0, fsmConfR1"
}

var adapterTemplate = template.Must(template.New("adapter").Parse(adapterSource))

// adapterFile generates the adapter of machine m's package.
func adapterFile(m *fsm.Machine) ([]byte, error) {
	d := adapterData{Package: m.Package, Initial: m.Initial.GoName, InitialData: len(m.Initial.Fields) > 0, Timers: len(m.Timers) > 0}
	if m.HasBehavior() {
		d.Behavior = "Behavior: fsmConfBehavior{c.d}, "
	}
	var types []string
	for _, fns := range [][]*fsm.Func{m.Guards, m.Effects} {
		for _, fn := range fns {
			if !fn.Used() {
				continue
			}
			var f adapterFunc
			f.GoName, f.Name = fn.GoName, strconv.Quote(fn.Name)
			var params, names, args []string
			for _, r := range fn.Reads {
				params = append(params, r.Param+" "+r.Type)
				names = append(names, strconv.Quote(r.Name))
				args = append(args, r.Param)
				types = append(types, r.Type)
			}
			f.Params, f.Names, f.Args = strings.Join(params, ", "), strings.Join(names, ", "), strings.Join(args, ", ")
			if fn.Kind == fsm.Guard {
				d.Guards = append(d.Guards, f)
				continue
			}
			var results, ptrs, rets []string
			for i, s := range fn.Sets {
				v := fmt.Sprintf("fsmConfR%d", i)
				results = append(results, s.Type)
				f.Vars = append(f.Vars, v+" "+s.Type)
				ptrs = append(ptrs, "&"+v)
				rets = append(rets, v)
				types = append(types, s.Type)
			}
			f.Results, f.Ptrs, f.Rets = strings.Join(results, ", "), strings.Join(ptrs, ", "), strings.Join(rets, ", ")
			d.Effects = append(d.Effects, f)
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
