package conformance

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// The driver and the adapter template are copied into the temporary
// module; see doc.go.
var (
	//go:embed testdata/driver/driver.go
	driverSource []byte
	//go:embed testdata/adapter.go.tmpl
	adapterSource string
)

// module is the temporary module's path.
const module = "example.com/conformance"

// TestConformance runs the corpus: every testdata/*.txtar is generated
// in-process; the cases that must not build are checked against their
// diagnostics, the others are compiled, all into one program, and their
// scripts run on the generated machines. In -short mode nothing is
// compiled: only the specs and scripts are checked.
func TestConformance(t *testing.T) {
	archives, err := filepath.Glob("testdata/*.txtar")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(archives), 25, "the corpus")

	dir := t.TempDir()
	// The generated packages import fsmgen's runtime: the module requires
	// this checkout, with its go.sum, and builds offline.
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	gomod := "module " + module + "\n\ngo 1.26\n\nrequire github.com/fsmgen/fsmgen v0.0.0\n\nreplace github.com/fsmgen/fsmgen => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))
	var runnable []*prepared
	for _, path := range archives {
		c, err := loadCase(path)
		if err != nil {
			t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) { t.Fatal(err) })
			continue
		}
		p := prepare(t, dir, c)
		if p.buildErrors != nil {
			t.Run(c.name, func(t *testing.T) { checkBuildErrors(t, p) })
			continue
		}
		runnable = append(runnable, p)
	}
	if testing.Short() {
		for _, p := range runnable {
			t.Run(p.c.name, func(t *testing.T) {
				require.NoError(t, p.err)
				t.Skip("-short: the generated machine is not compiled")
			})
		}
		return
	}
	start := time.Now()
	results, buildFailed := buildAndRun(t, dir, runnable)
	t.Logf("built and ran %d generated machines in %s", len(runnable), time.Since(start).Round(time.Millisecond))
	for _, p := range runnable {
		t.Run(p.c.name, func(t *testing.T) {
			require.NoError(t, p.err)
			require.Empty(t, buildFailed[p.c.name], "the generated package does not compile")
			records, ok := results[p.c.name]
			require.True(t, ok, "the driver returned nothing for the case")
			runChecks(t, p, records)
		})
	}
}

// corpusCase is one archive of the corpus.
type corpusCase struct {
	name   string // the archive's base name, without .txtar
	path   string
	source string // the archive's comment: what the case checks and its source
	spec   []byte
	lines  []scriptLine
}

// scriptLine is one instruction of a script.
type scriptLine struct {
	pos  string // "testdata/x.txtar:31", for messages
	verb string // new, restore, send, fire, guard, effect, or "want " and what it checks
	arg  string // the rest of the line, trimmed
}

func (l scriptLine) String() string {
	if strings.HasPrefix(l.verb, "want ") {
		return l.pos + ": " + strings.TrimSpace(l.verb+": "+l.arg)
	}
	return l.pos + ": " + strings.TrimSpace(l.verb+" "+l.arg)
}

// sourceRE is what a case's comment must cite.
var sourceRE = regexp.MustCompile(`SCXML|Boost\.SML|UML 2\.5`)

// loadCase reads an archive: a comment citing the case's source, then the
// files spec.yaml and script.
func loadCase(path string) (*corpusCase, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ar := txtar.Parse(raw)
	c := &corpusCase{name: strings.TrimSuffix(filepath.Base(path), ".txtar"), path: path, source: strings.TrimSpace(string(ar.Comment))}
	if !regexp.MustCompile(`^[a-z][a-z0-9_]*$`).MatchString(c.name) {
		return nil, fmt.Errorf("%s: name the archive in lower case, letters, digits and underscores: it becomes a directory and a map key", path)
	}
	if !sourceRE.MatchString(c.source) {
		return nil, fmt.Errorf("%s: the comment before the first file must describe the case and cite its source (a W3C SCXML test, a Boost.SML test or a section of UML 2.5)", path)
	}
	var script []byte
	for _, f := range ar.Files {
		switch f.Name {
		case "spec.yaml":
			c.spec = f.Data
		case "script":
			script = f.Data
		default:
			return nil, fmt.Errorf("%s: unexpected file %q: an archive holds spec.yaml and script", path, f.Name)
		}
	}
	if c.spec == nil || script == nil {
		return nil, fmt.Errorf("%s: an archive holds spec.yaml and script", path)
	}
	first := scriptStart(raw)
	for i, text := range strings.Split(string(script), "\n") {
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l, err := parseLine(fmt.Sprintf("%s:%d", path, first+i), text)
		if err != nil {
			return nil, err
		}
		c.lines = append(c.lines, l)
	}
	return c, nil
}

// parseLine splits a script line into its instruction and the rest;
// pos says where it is, for messages.
func parseLine(pos, text string) (scriptLine, error) {
	l := scriptLine{pos: pos}
	if rest, ok := strings.CutPrefix(text, "want "); ok {
		what, arg, found := strings.Cut(rest, ":")
		if !found {
			return l, fmt.Errorf("%s: want needs a colon: want actions: ..., want state: ...", pos)
		}
		l.verb, l.arg = "want "+strings.TrimSpace(what), strings.TrimSpace(arg)
		return l, nil
	}
	verb, arg, _ := strings.Cut(text, " ")
	l.verb, l.arg = verb, strings.TrimSpace(arg)
	return l, nil
}

// scriptStart returns the line number, in the archive, of the script's
// first line.
func scriptStart(raw []byte) int {
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) == "-- script --" {
			return i + 2
		}
	}
	return 0
}

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

// model answers the questions translating a script asks of a machine.
type model struct {
	m *fsm.Machine
}

func newModel(m *fsm.Machine) *model { return &model{m: m} }

// action returns the first action (builtin ones included) match accepts.
func (mdl *model) action(match func(*fsm.Action) bool) *fsm.Action {
	for _, a := range mdl.m.Actions {
		if match(a) {
			return a
		}
	}
	return nil
}

// fn returns the guard or effect of the given name that the machine
// calls, or nil.
func (mdl *model) fn(name string) *fsm.Func {
	for _, fns := range [][]*fsm.Func{mdl.m.Guards, mdl.m.Effects} {
		for _, fn := range fns {
			if fn.Name == name && fn.Used() {
				return fn
			}
		}
	}
	return nil
}

// leaf returns the first leaf state match accepts.
func (mdl *model) leaf(match func(*fsm.State) bool) *fsm.State {
	for _, s := range mdl.m.States {
		if match(s) {
			return s
		}
	}
	return nil
}

// translate turns a script line into an operation or a check.
func (mdl *model) translate(l scriptLine) (step, error) {
	s := step{line: l}
	m := mdl.m
	switch l.verb {
	case "new":
		data, err := withKind(m.Initial.Snake, l.arg)
		s.op = &op{Op: "new", Data: data}
		return s, err
	case "restore", "send":
		name, fields, _ := strings.Cut(l.arg, " ")
		var kind string
		if l.verb == "restore" {
			st := mdl.leaf(func(st *fsm.State) bool { return st.Name == name })
			if st == nil {
				return s, fmt.Errorf("restore %s: no such leaf state", name)
			}
			kind = st.Snake
		} else {
			i := slices.IndexFunc(m.Events, func(e *fsm.Event) bool { return e.Name == name })
			if i < 0 {
				return s, fmt.Errorf("send %s: no such event", name)
			}
			kind = m.Events[i].Snake
		}
		data, err := withKind(kind, fields)
		s.op = &op{Op: l.verb, Data: data}
		return s, err
	case "fire":
		n, err := strconv.ParseUint(l.arg, 10, 64)
		if err != nil || m.TimerFired == nil {
			return s, errors.New("fire takes a timer id, and the machine must have timers")
		}
		data, err := json.Marshal(map[string]any{"kind": m.TimerFired.Snake, "timer": n})
		s.op = &op{Op: "send", Data: data}
		return s, err
	case "guard":
		name, answer, _ := strings.Cut(l.arg, " ")
		fn := mdl.fn(name)
		if fn == nil || fn.Kind != fsm.Guard || (answer != "true" && answer != "false") {
			return s, fmt.Errorf("guard takes a guard the machine calls and true or false")
		}
		s.op = &op{Op: "guard", Name: name, Answer: answer == "true"}
		return s, nil
	case "effect":
		name, rest, _ := strings.Cut(l.arg, " ")
		fn := mdl.fn(name)
		if fn == nil || fn.Kind != fsm.Effect {
			return s, fmt.Errorf("effect %s: the machine calls no such effect", name)
		}
		values, err := split(rest, ' ')
		if err != nil {
			return s, err
		}
		if len(values) != len(fn.Sets) {
			return s, fmt.Errorf("effect %s sets %d values (%s), the line gives %d", name, len(fn.Sets), fieldList(fn.Sets), len(values))
		}
		s.op = &op{Op: "effect", Name: name}
		for i, v := range values {
			raw, err := parseValue(fn.Sets[i].Type, v)
			if err != nil {
				return s, fmt.Errorf("effect %s, %s: %w", name, fn.Sets[i].Name, err)
			}
			s.op.Results = append(s.op.Results, raw)
		}
		return s, nil
	case "want actions", "want calls":
		what := strings.TrimPrefix(l.verb, "want ")
		items, err := parseItems(l.arg)
		if err != nil {
			return s, err
		}
		s.check = &check{what: what}
		for _, it := range items {
			var text string
			if what == "actions" {
				text, err = mdl.expectAction(it)
			} else {
				text, err = mdl.expectCall(it)
			}
			if err != nil {
				return s, err
			}
			s.check.items = append(s.check.items, text)
		}
		return s, nil
	case "want state":
		name, fields, _ := strings.Cut(l.arg, " ")
		if mdl.leaf(func(st *fsm.State) bool { return st.Name == name }) == nil {
			return s, fmt.Errorf("want state %s: no such leaf state (the machine is always in a leaf)", name)
		}
		s.check = &check{what: "state", state: name}
		if fields = strings.TrimSpace(fields); fields != "" {
			canon, err := canonical(json.RawMessage(fields))
			if err != nil || !strings.HasPrefix(canon, "{") {
				return s, fmt.Errorf("want state %s: the fields are a JSON object: %v", name, err)
			}
			s.check.fields = canon
		}
		return s, nil
	case "want timers":
		s.check = &check{what: "timers"}
		for _, t := range strings.Fields(l.arg) {
			id, delay, ok := strings.Cut(t, ":")
			n, err := strconv.ParseUint(id, 10, 64)
			d, err2 := time.ParseDuration(delay)
			if !ok || err != nil || err2 != nil {
				return s, fmt.Errorf("want timers lists ID:DELAY, as 1:3s; not %q", t)
			}
			s.check.items = append(s.check.items, timerText(n, d))
		}
		return s, nil
	case "want error":
		s.check = &check{what: "error"}
		if l.arg == "rejected" {
			s.check.rejected = true
			return s, nil
		}
		re, err := regexp.Compile(l.arg)
		s.check.re = re
		return s, err
	}
	return s, fmt.Errorf("unknown instruction %q (see doc.go)", l.verb)
}

// withKind returns the JSON object fields (empty for none) with "kind"
// added: a state or event as UnmarshalState and UnmarshalEvent read it.
func withKind(kind, fields string) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if fields = strings.TrimSpace(fields); fields != "" {
		if err := json.Unmarshal([]byte(fields), &obj); err != nil {
			return nil, fmt.Errorf("the fields are a JSON object: %w", err)
		}
	}
	if _, ok := obj["kind"]; ok {
		return nil, errors.New(`give the fields without "kind": the name says it`)
	}
	obj["kind"] = json.RawMessage(strconv.Quote(kind))
	return json.Marshal(obj)
}

// item is an action or call as a script writes it: Name(k=v, ...).
type item struct {
	name string
	args [][2]string
}

// parseItems reads a space-separated list of items.
func parseItems(text string) ([]item, error) {
	words, err := split(text, ' ')
	if err != nil {
		return nil, err
	}
	var out []item
	for _, w := range words {
		name, rest, paren := strings.Cut(w, "(")
		it := item{name: name}
		if paren {
			if !strings.HasSuffix(rest, ")") {
				return nil, fmt.Errorf("%q: an item is Name or Name(k=v, ...)", w)
			}
			args, err := split(strings.TrimSuffix(rest, ")"), ',')
			if err != nil {
				return nil, err
			}
			for _, a := range args {
				k, v, ok := strings.Cut(a, "=")
				if !ok {
					return nil, fmt.Errorf("%q: arguments are k=v", w)
				}
				it.args = append(it.args, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// split cuts text at sep where sep is outside JSON strings, brackets,
// braces and parentheses, dropping empty pieces; for sep ' ' any run of
// white space separates.
func split(text string, sep rune) ([]string, error) {
	var out []string
	var cur strings.Builder
	depth, inString, escaped := 0, false, false
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for _, r := range text {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case r == '\\':
				escaped = true
			case r == '"':
				inString = false
			}
		case r == '"':
			inString = true
		case r == '(' || r == '[' || r == '{':
			depth++
		case r == ')' || r == ']' || r == '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced %q in %q", r, text)
			}
		case depth == 0 && (r == sep || sep == ' ' && (r == '\t' || r == ' ')):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	if inString || depth != 0 {
		return nil, fmt.Errorf("unterminated string or bracket in %q", text)
	}
	flush()
	return out, nil
}

// expectAction renders an expected action: every field of the action
// given once.
func (mdl *model) expectAction(it item) (string, error) {
	a := mdl.action(func(a *fsm.Action) bool { return a.Name == it.name })
	if a == nil {
		return "", fmt.Errorf("%s: no such action", it.name)
	}
	return expectItem(it, a.Fields, "action "+a.Name)
}

// expectCall renders an expected call of a guard or effect: every value
// it reads given once.
func (mdl *model) expectCall(it item) (string, error) {
	fn := mdl.fn(it.name)
	if fn == nil {
		return "", fmt.Errorf("%s: the machine calls no such guard or effect", it.name)
	}
	return expectItem(it, fn.Reads, fn.Name)
}

func expectItem(it item, fields []*fsm.Field, what string) (string, error) {
	vals := map[string]json.RawMessage{}
	for _, kv := range it.args {
		i := slices.IndexFunc(fields, func(f *fsm.Field) bool { return f.Name == kv[0] })
		if i < 0 {
			return "", fmt.Errorf("%s has no field %s (it has %s)", what, kv[0], fieldList(fields))
		}
		if _, dup := vals[kv[0]]; dup {
			return "", fmt.Errorf("%s: %s given twice", what, kv[0])
		}
		raw, err := parseValue(fields[i].Type, kv[1])
		if err != nil {
			return "", fmt.Errorf("%s, %s: %w", what, kv[0], err)
		}
		vals[kv[0]] = raw
	}
	if len(vals) != len(fields) {
		return "", fmt.Errorf("%s: give every field (%s), so that nothing goes unchecked", what, fieldList(fields))
	}
	return render(it.name, fields, vals), nil
}

func fieldList(fields []*fsm.Field) string {
	if len(fields) == 0 {
		return "none"
	}
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// parseValue reads a value as a script writes it: a Go duration for a
// time.Duration, JSON, or a bare word for a string.
func parseValue(typ, text string) (json.RawMessage, error) {
	if isDuration(typ) {
		d, err := time.ParseDuration(text)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(strconv.FormatInt(int64(d), 10)), nil
	}
	if json.Valid([]byte(text)) {
		return json.RawMessage(text), nil
	}
	return json.Marshal(text)
}

func isDuration(typ string) bool { return typ == "time.Duration" }

// render writes an action or call as Name(k=v, ...): the fields in
// declaration order, then any others sorted; durations as Go durations,
// other values as canonical JSON.
func render(name string, fields []*fsm.Field, vals map[string]json.RawMessage) string {
	var parts []string
	seen := map[string]bool{}
	for _, f := range fields {
		if v, ok := vals[f.Name]; ok {
			parts = append(parts, f.Name+"="+renderValue(f.Type, v))
			seen[f.Name] = true
		}
	}
	var rest []string
	for k := range vals {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, k+"="+renderValue("", vals[k]))
	}
	if len(parts) == 0 {
		return name
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

func renderValue(typ string, v json.RawMessage) string {
	if isDuration(typ) {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return time.Duration(n).String()
		}
	}
	c, err := canonical(v)
	if err != nil {
		return string(v)
	}
	return c
}

// canonical re-encodes JSON with sorted keys and exact numbers.
func canonical(v json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return "", err
	}
	out, err := json.Marshal(x)
	return string(out), err
}

func timerText(id uint64, d time.Duration) string { return fmt.Sprintf("%d:%s", id, d) }

// record mirrors driver.Record, entry driver.Entry.
type record struct {
	Trace    []entry         `json:"trace"`
	Err      string          `json:"err"`
	Rejected bool            `json:"rejected"`
	State    json.RawMessage `json:"state"`
	Timers   []timerRecord   `json:"timers"`
}

// timerRecord mirrors driver.Timer.
type timerRecord struct {
	ID    uint64        `json:"id"`
	Delay time.Duration `json:"delay"`
}

type entry struct {
	Type   string                     `json:"type"`
	Name   string                     `json:"name"`
	Args   map[string]json.RawMessage `json:"args"`
	Rule   int                        `json:"rule"`
	From   string                     `json:"from"`
	To     string                     `json:"to"`
	Action json.RawMessage            `json:"action"`
}

// gotAction renders an action the Recorder held, from its JSON.
func (mdl *model) gotAction(raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "undecodable action " + string(raw)
	}
	var kind string
	_ = json.Unmarshal(obj["kind"], &kind)
	delete(obj, "kind")
	a := mdl.action(func(a *fsm.Action) bool { return a.Snake == kind })
	if a == nil {
		return "unknown action " + string(raw)
	}
	vals := map[string]json.RawMessage{}
	for k, v := range obj {
		name := k
		if f := slices.IndexFunc(a.Fields, func(f *fsm.Field) bool { return f.JSONName == k }); f >= 0 {
			name = a.Fields[f].Name
		}
		vals[name] = v
	}
	return render(a.Name, a.Fields, vals)
}

// gotCall renders a recorded call of a guard or effect.
func (mdl *model) gotCall(e entry) string {
	fn := mdl.fn(e.Name)
	if fn == nil {
		return render(e.Name, nil, e.Args)
	}
	return render(fn.Name, fn.Reads, e.Args)
}

// gotState returns the name of a recorded state and its fields as
// canonical JSON.
func (mdl *model) gotState(raw json.RawMessage) (string, string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "no state (" + string(raw) + ")", ""
	}
	var kind string
	_ = json.Unmarshal(obj["kind"], &kind)
	delete(obj, "kind")
	name := "unknown state " + kind
	if s := mdl.leaf(func(s *fsm.State) bool { return s.Snake == kind }); s != nil {
		name = s.Name
	}
	data, _ := json.Marshal(obj)
	fields, _ := canonical(data)
	return name, fields
}

// reporter is where checks report failures: a *testing.T, or a
// recorder in the harness's own tests.
type reporter interface {
	Errorf(format string, args ...any)
}

// runChecks walks the script with the driver's records: every operation
// has one record, every want line checks the records so far. Actions
// and calls accumulate until a want line checks them; an operation's
// error must be checked by the want error line that follows it; every
// action must be checked by the end of the script, and before the next
// new or restore.
func runChecks(t reporter, p *prepared, records []record) {
	mdl := newModel(p.m)
	var actions, calls []string
	var last *record
	var errLine *scriptLine // the operation whose error is unchecked
	unchecked := func(at string) {
		if errLine != nil {
			t.Errorf("%s: unexpected error: %s (add want error: if the machine should fail here)", errLine, last.Err)
			errLine = nil
		}
		if len(actions) > 0 {
			t.Errorf("%s: actions no want actions line checked: %s", at, strings.Join(actions, " "))
			actions = nil
		}
	}
	n := 0
	for _, s := range p.steps {
		l := s.line
		if s.op != nil {
			if n >= len(records) {
				t.Errorf("%s: not run: the driver stopped at an earlier line", l)
				return
			}
			rec := &records[n]
			n++
			if s.op.Op == "new" || s.op.Op == "restore" {
				unchecked(l.String())
				calls = nil
			} else if errLine != nil {
				unchecked(l.String())
			}
			if strings.HasPrefix(rec.Err, "harness: ") || strings.HasPrefix(rec.Err, "panic: ") {
				t.Errorf("%s: %s", l, rec.Err)
				continue
			}
			last = rec
			if rec.Err != "" {
				ll := l
				errLine = &ll
			}
			for _, e := range rec.Trace {
				switch e.Type {
				case "action":
					actions = append(actions, mdl.gotAction(e.Action))
				case "call":
					calls = append(calls, mdl.gotCall(e))
				}
			}
			checkOrder(t, l, s.op.Op, rec.Trace)
			continue
		}
		if last == nil {
			t.Errorf("%s: nothing to check yet", l)
			continue
		}
		c := s.check
		switch c.what {
		case "actions":
			assert.Equal(t, nonNil(c.items), nonNil(actions), "%s", l)
			actions = nil
		case "calls":
			assert.Equal(t, nonNil(c.items), nonNil(calls), "%s", l)
			calls = nil
		case "state":
			name, fields := mdl.gotState(last.State)
			want, got := c.state, name
			if c.fields != "" {
				want, got = want+" "+c.fields, got+" "+fields
			}
			assert.Equal(t, want, got, "%s", l)
		case "timers":
			var got []string
			for _, tm := range last.Timers {
				got = append(got, timerText(tm.ID, tm.Delay))
			}
			assert.Equal(t, nonNil(c.items), nonNil(got), "%s", l)
		case "error":
			switch {
			case errLine == nil:
				t.Errorf("%s: the last operation returned no error", l)
			case c.rejected:
				assert.True(t, last.Rejected, "%s: the error does not wrap ErrRejected: %s", l, last.Err)
			default:
				assert.Regexp(t, c.re, last.Err, "%s", l)
			}
			errLine = nil
		}
	}
	unchecked(p.c.path + ": end of script")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// checkOrder checks what every step of every case must do, whatever the
// spec: the guards and effects a rule calls all run before the first
// action it hands out. The observer marks where each rule fired (after
// its calls, before its actions), so a trace is, rule after rule, calls,
// a mark, actions: an action before the first mark, or after a call with
// no mark between them, breaks the order. New has no observer: its calls
// (entry effects, delays) all come before its actions.
func checkOrder(t reporter, l scriptLine, op string, trace []entry) {
	// For New the whole trace is one step, marked from the start.
	marked, called, acted := op == "new", false, false
	for _, e := range trace {
		bad := false
		switch e.Type {
		case "step":
			marked, called, acted = true, false, false
		case "call":
			called = true
			bad = op == "new" && acted
		case "action":
			acted = true
			bad = !marked || (called && op != "new")
		}
		if bad {
			t.Errorf("%s: guards and effects must all run before the actions of their step; the trace was: %s", l, traceText(trace))
			return
		}
	}
}

// traceText lists a trace briefly, for messages.
func traceText(trace []entry) string {
	var parts []string
	for _, e := range trace {
		switch e.Type {
		case "step":
			parts = append(parts, fmt.Sprintf("[rule %d: %s -> %s]", e.Rule, e.From, e.To))
		case "call":
			parts = append(parts, e.Name+"()")
		case "action":
			parts = append(parts, string(e.Action))
		}
	}
	return strings.Join(parts, " ")
}
