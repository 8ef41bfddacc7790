package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// Specs for the format tests, written into a temporary directory.
const (
	goodSpec = "version: 2\nmachine: M\npackage: m\noutput:\n  go: out\nstates:\n  A:\n    initial: true\n  B:\n    terminal: true\n    ignore: [E]\nevents:\n  E: {}\ntransitions:\n  - from: A\n    on: E\n    to: B\n"
	warnSpec = goodSpec + "actions:\n  Unused: {}\n"
	badSpec  = "version: 2\nmachine: M\npackage: m\noutput:\n  go: out\nstates:\n  A:\n    initial: true\n  B: {}\nevents:\n  E: {}\ntransitions:\n  - from: A\n    on: E\n    to: Bee\n"
)

// cli runs fsmgen in dir (the current directory during the call) and
// returns its exit status, stdout and stderr.
func cli(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// specDir writes the named specs into a new temporary directory, under
// specs/, and returns the directory.
func specDir(t *testing.T, specs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "specs"), 0o755))
	for name, src := range specs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "specs", name), []byte(src), 0o644))
	}
	return dir
}

// sarifSchemaJSON is the official SARIF 2.1.0 schema; testdata/README.md
// says where it comes from.
//
//go:embed testdata/sarif-schema-2.1.0.json
var sarifSchemaJSON []byte

var (
	sarifOnce     sync.Once
	sarifCompiled *jsonschema.Schema
	sarifErr      error
)

// sarifValidator returns the official SARIF 2.1.0 schema, compiled once,
// with formats (uri, uri-reference, date-time) asserted.
func sarifValidator(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sarifOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sarifSchemaJSON))
		if err != nil {
			sarifErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if sarifErr = c.AddResource(sarifSchemaURL, doc); sarifErr != nil {
			return
		}
		sarifCompiled, sarifErr = c.Compile(sarifSchemaURL)
	})
	require.NoError(t, sarifErr)
	return sarifCompiled
}

// sarifSchemaURL is the schema's own id.
const sarifSchemaURL = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// validateSARIF checks out against the SARIF schema.
func validateSARIF(t *testing.T, out string) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	require.NoError(t, err, "SARIF output is JSON")
	assert.NoError(t, sarifValidator(t).Validate(inst), "SARIF output:\n%s", out)
}

// TestSARIFSchemaRejects makes sure the validation can fail: documents
// that break the schema in ways fsmgen could are refused.
func TestSARIFSchemaRejects(t *testing.T) {
	valid := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"fsmgen"}},"results":[{"message":{"text":"m"},"level":"error","locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.yaml"},"region":{"startLine":1}}}]}]}]}`
	tests := []struct {
		name, old, new string
	}{
		{"unknown level", `"level":"error"`, `"level":"fatal"`},
		{"line 0", `"startLine":1`, `"startLine":0`},
		{"wrong version", `"version":"2.1.0"`, `"version":"2.0.0"`},
		{"no message", `"message":{"text":"m"},`, ``},
		{"a uri that is not a uri", `"uri":"a.yaml"`, `"uri":"a b\\\\c%"`},
		{"unknown property", `"level":"error"`, `"level":"error","severity":"high"`},
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(valid))
	require.NoError(t, err)
	require.NoError(t, sarifValidator(t).Validate(inst), "the baseline is valid")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(valid, tt.old, tt.new, 1)
			require.NotEqual(t, valid, doc)
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
			require.NoError(t, err)
			assert.Error(t, sarifValidator(t).Validate(inst))
		})
	}
}

// sarifDoc is the part of a SARIF log the tests read.
type sarifDoc struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name           string `json:"name"`
				InformationURI string `json:"informationUri"`
				Rules          []struct {
					ID                   string            `json:"id"`
					ShortDescription     map[string]string `json:"shortDescription"`
					FullDescription      map[string]string `json:"fullDescription"`
					Help                 map[string]string `json:"help"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful        bool `json:"executionSuccessful"`
			ToolExecutionNotifications []struct {
				Message map[string]string `json:"message"`
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results []struct {
			RuleID    string            `json:"ruleId"`
			RuleIndex int               `json:"ruleIndex"`
			Level     string            `json:"level"`
			Message   map[string]string `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine   int `json:"startLine"`
						StartColumn int `json:"startColumn"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
			Properties          struct {
				Notes []string `json:"notes"`
			} `json:"properties"`
		} `json:"results"`
	} `json:"runs"`
}

// TestSARIF runs check and generate with -format sarif through the CLI on
// specs with errors, warnings, stale outputs and none, and checks each
// log against the official schema, GitHub code scanning's required
// fields, and the findings expected.
func TestSARIF(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) // after the specs are written
		args  []string
		code  int
		want  []string // "ruleId level uri:line:col" of each result
	}{
		{
			name: "errors",
			args: []string{"check", "-format", "sarif", "specs/bad.yaml"},
			code: exitError,
			want: []string{"unknown-name error specs/bad.yaml:15:9"},
		},
		{
			name: "warnings only pass",
			args: []string{"check", "-format", "sarif", "specs/warn.yaml"},
			setup: func(t *testing.T, dir string) {
				code, _, stderr := cli(t, dir, "generate", "specs/warn.yaml")
				require.Equal(t, exitOK, code, stderr)
			},
			code: exitOK,
			want: []string{"unused-declaration warning specs/warn.yaml:19:3"},
		},
		{
			name: "warnings fail with -werror",
			args: []string{"check", "-werror", "-format", "sarif", "specs/warn.yaml"},
			code: exitError,
			want: []string{"unused-declaration error specs/warn.yaml:19:3"},
		},
		{
			name: "stale and missing outputs",
			args: []string{"check", "-format", "sarif", "specs/good.yaml"},
			setup: func(t *testing.T, dir string) {
				code, _, stderr := cli(t, dir, "generate", "specs/good.yaml")
				require.Equal(t, exitOK, code, stderr)
				require.NoError(t, os.WriteFile(filepath.Join(dir, "specs/out/m_gen.go"), []byte("// Code generated by fsmgen. DO NOT EDIT.\n"), 0o644))
				require.NoError(t, os.Remove(filepath.Join(dir, "specs/out/m_gen_test.go")))
			},
			code: exitError,
			want: []string{"stale-output error specs/out/m_gen.go:1:0", "stale-output error specs/out/m_gen_test.go:1:0"},
		},
		{
			name: "up to date",
			args: []string{"check", "-format", "sarif", "specs/good.yaml"},
			setup: func(t *testing.T, dir string) {
				code, _, stderr := cli(t, dir, "generate", "specs/good.yaml")
				require.Equal(t, exitOK, code, stderr)
			},
			code: exitOK,
		},
		{
			name: "generate with errors",
			args: []string{"generate", "-format", "sarif", "specs/good.yaml", "specs/bad.yaml"},
			code: exitError,
			want: []string{"unknown-name error specs/bad.yaml:15:9"},
		},
		{
			name: "a whole-file problem is on the first line",
			args: []string{"check", "-format", "sarif", "specs/empty.yaml"},
			code: exitError,
			want: []string{"empty-spec error specs/empty.yaml:1:0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := specDir(t, map[string]string{"good.yaml": goodSpec, "warn.yaml": warnSpec, "bad.yaml": badSpec, "empty.yaml": "\n"})
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			code, stdout, stderr := cli(t, dir, tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			validateSARIF(t, stdout)

			var doc sarifDoc
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
			// What GitHub code scanning requires.
			assert.Equal(t, sarifSchemaURL, doc.Schema)
			assert.Equal(t, "2.1.0", doc.Version)
			require.Len(t, doc.Runs, 1)
			run := doc.Runs[0]
			assert.Equal(t, "fsmgen", run.Tool.Driver.Name)
			assert.Equal(t, "https://github.com/fsmgen/fsmgen", run.Tool.Driver.InformationURI)
			require.Len(t, run.Invocations, 1)
			assert.True(t, run.Invocations[0].ExecutionSuccessful)
			var got []string
			for _, r := range run.Results {
				assert.NotEmpty(t, r.RuleID)
				assert.NotEmpty(t, r.Message["text"])
				require.Len(t, r.Locations, 1)
				loc := r.Locations[0].PhysicalLocation
				assert.NotEmpty(t, loc.ArtifactLocation.URI)
				assert.Equal(t, "%SRCROOT%", loc.ArtifactLocation.URIBaseID)
				assert.NotContains(t, loc.ArtifactLocation.URI, `\`)
				assert.False(t, filepath.IsAbs(loc.ArtifactLocation.URI))
				assert.Regexp(t, `^[0-9a-f]{64}:\d+$`, r.PartialFingerprints["fsmgen/v1"])
				require.Less(t, r.RuleIndex, len(run.Tool.Driver.Rules))
				assert.Equal(t, r.RuleID, run.Tool.Driver.Rules[r.RuleIndex].ID, "ruleIndex points at the rule")
				pos := loc.ArtifactLocation.URI
				require.NotNil(t, loc.Region, "GitHub code scanning needs a region with a startLine")
				{
					assert.GreaterOrEqual(t, loc.Region.StartLine, 1, "a location with uri and startLine")
					pos += ":" + itoa(loc.Region.StartLine) + ":" + itoa(loc.Region.StartColumn)
				}
				got = append(got, r.RuleID+" "+r.Level+" "+pos)
			}
			assert.Equal(t, tt.want, got)
			for _, r := range run.Tool.Driver.Rules {
				assert.NotEmpty(t, r.ShortDescription["text"], r.ID)
				assert.NotEmpty(t, r.FullDescription["text"], r.ID)
				assert.NotEmpty(t, r.Help["text"], r.ID)
				assert.Contains(t, []string{"error", "warning"}, r.DefaultConfiguration.Level, r.ID)
			}
			assert.NotContains(t, stdout, "--- ", "no diff on stdout")

			code2, stdout2, _ := cli(t, dir, tt.args...)
			assert.Equal(t, code, code2)
			assert.Equal(t, stdout, stdout2, "the same input gives the same bytes")
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestJSON checks the shape of -format json through the CLI: the keys of
// the document and of each diagnostic, notes as an empty list, stale
// outputs as findings, and a failure other than a spec's in "error".
func TestJSON(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		setup  func(t *testing.T, dir string)
		code   int
		want   []jsonDiagnostic
		errRE  string // the document's "error", "" for none
		stderr string // a regexp stderr matches
	}{
		{
			name: "errors and warnings",
			args: []string{"check", "-format", "json", "specs/warn.yaml", "specs/bad.yaml"},
			code: exitError,
			want: []jsonDiagnostic{
				{File: "specs/bad.yaml", Line: 15, Column: 9, Severity: "error", Rule: "unknown-name", Message: `unknown state "Bee"`, Notes: []string{}},
				{File: "specs/warn.yaml", Line: 19, Column: 3, Severity: "warning", Rule: "unused-declaration", Message: "action Unused is never emitted", Notes: []string{}},
			},
		},
		{
			name: "stale outputs are findings",
			args: []string{"check", "-format", "json", "specs/good.yaml"},
			setup: func(t *testing.T, dir string) {
				code, _, stderr := cli(t, dir, "generate", "specs/good.yaml")
				require.Equal(t, exitOK, code, stderr)
				require.NoError(t, os.WriteFile(filepath.Join(dir, "specs/out/m_gen.go"), []byte("// Code generated by fsmgen. DO NOT EDIT.\n"), 0o644))
				require.NoError(t, os.Remove(filepath.Join(dir, "specs/out/m_gen_test.go")))
			},
			code: exitError,
			want: []jsonDiagnostic{
				{File: "specs/out/m_gen.go", Severity: "error", Rule: "stale-output", Message: "generated file is stale: it differs from what spec specs/good.yaml generates; run fsmgen generate specs/good.yaml", Notes: []string{}},
				{File: "specs/out/m_gen_test.go", Severity: "error", Rule: "stale-output", Message: "generated file is missing: spec specs/good.yaml generates it; run fsmgen generate specs/good.yaml", Notes: []string{}},
			},
		},
		{
			name:   "generate writes and says so on stderr",
			args:   []string{"generate", "-format", "json", "specs/warn.yaml"},
			code:   exitOK,
			want:   []jsonDiagnostic{{File: "specs/warn.yaml", Line: 19, Column: 3, Severity: "warning", Rule: "unused-declaration", Message: "action Unused is never emitted", Notes: []string{}}},
			stderr: `(?m)^wrote specs/out/m_gen.go$`,
		},
		{
			name:   "a failure that is not a spec's",
			args:   []string{"check", "-format", "json", "specs/nosuch.yaml"},
			code:   exitError,
			want:   []jsonDiagnostic{},
			errRE:  `^read spec: .*nosuch.yaml`,
			stderr: `(?m)^fsmgen: read spec: .*nosuch.yaml`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := specDir(t, map[string]string{"good.yaml": goodSpec, "warn.yaml": warnSpec, "bad.yaml": badSpec})
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			code, stdout, stderr := cli(t, dir, tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			if tt.stderr != "" {
				assert.Regexp(t, tt.stderr, stderr)
			}

			var shape map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(stdout), &shape), "stdout is one JSON document:\n%s", stdout)
			keys := []string{"diagnostics"}
			if tt.errRE != "" {
				keys = append(keys, "error")
			}
			assert.ElementsMatch(t, keys, mapKeys(shape))
			var items []map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(shape["diagnostics"], &items))
			for _, it := range items {
				assert.ElementsMatch(t, []string{"file", "line", "column", "severity", "rule", "message", "notes"}, mapKeys(it))
				assert.Equal(t, "[]", string(it["notes"]), "notes is a list, empty here")
			}

			var doc jsonReport
			dec := json.NewDecoder(strings.NewReader(stdout))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&doc))
			assert.Equal(t, tt.want, doc.Diagnostics)
			if tt.errRE == "" {
				assert.Empty(t, doc.Error)
			} else {
				assert.Regexp(t, tt.errRE, doc.Error)
			}
		})
	}
}

func mapKeys(m map[string]json.RawMessage) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// TestSARIFFailure checks that a failure other than a spec's still gives
// a valid log, which says the run did not complete.
func TestSARIFFailure(t *testing.T) {
	dir := specDir(t, nil)
	code, stdout, stderr := cli(t, dir, "check", "-format", "sarif", "specs/nosuch.yaml")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "fsmgen: read spec: ")
	validateSARIF(t, stdout)
	var doc sarifDoc
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Runs, 1)
	require.Len(t, doc.Runs[0].Invocations, 1)
	inv := doc.Runs[0].Invocations[0]
	assert.False(t, inv.ExecutionSuccessful)
	require.Len(t, inv.ToolExecutionNotifications, 1)
	assert.Contains(t, inv.ToolExecutionNotifications[0].Message["text"], "nosuch.yaml")
	assert.Empty(t, doc.Runs[0].Results)
}

// noted is a list with notes, as the checker makes with List.Note.
func noted() diag.List {
	var l diag.List
	l.Errorf(diag.Pos{File: "specs/m.yaml", Line: 3, Col: 5}, "rule %s can never fire: no state that takes it can be reached from the initial state %s", "A on E", "A")
	l.Note("A is entered only through B")
	l.Note("path: New *emphasis* [link](x)")
	l.Warnf(diag.Pos{File: "specs/m.yaml", Line: 7, Col: 1}, "action %s is never emitted", "Unused")
	return l
}

// TestNotes checks how each format shows notes.
func TestNotes(t *testing.T) {
	l := noted()

	var text bytes.Buffer
	printText(&text, l[0], []byte("a\nb\n  - from: A\n"))
	assert.Equal(t, "specs/m.yaml:3:5: rule A on E can never fire: no state that takes it can be reached from the initial state A\n"+
		"      - from: A\n"+
		"        ^\n"+
		"    note: A is entered only through B\n"+
		"    note: path: New *emphasis* [link](x)\n", text.String())

	var js bytes.Buffer
	require.NoError(t, writeJSON(&js, l, nil))
	var doc jsonReport
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	require.Len(t, doc.Diagnostics, 2)
	assert.Equal(t, "unreachable-rule", doc.Diagnostics[0].Rule)
	assert.Equal(t, []string{"A is entered only through B", "path: New *emphasis* [link](x)"}, doc.Diagnostics[0].Notes)
	assert.Equal(t, []string{}, doc.Diagnostics[1].Notes)

	dir := t.TempDir()
	t.Chdir(dir)
	var sarif bytes.Buffer
	require.NoError(t, writeSARIF(&sarif, l, nil))
	validateSARIF(t, sarif.String())
	var sd sarifDoc
	require.NoError(t, json.Unmarshal(sarif.Bytes(), &sd))
	res := sd.Runs[0].Results
	require.Len(t, res, 2)
	assert.Equal(t, "rule A on E can never fire: no state that takes it can be reached from the initial state A\nnote: A is entered only through B\nnote: path: New *emphasis* [link](x)", res[0].Message["text"])
	assert.Equal(t, "rule A on E can never fire: no state that takes it can be reached from the initial state A\n\n- A is entered only through B\n- path: New \\*emphasis\\* \\[link\\]\\(x\\)", res[0].Message["markdown"])
	assert.Equal(t, []string{"A is entered only through B", "path: New *emphasis* [link](x)"}, res[0].Properties.Notes)
	assert.NotContains(t, res[1].Message, "markdown", "no notes, no Markdown")
	assert.Empty(t, res[1].Properties.Notes)
	assert.Equal(t, []string{"unreachable-rule", "unused-declaration"}, []string{sd.Runs[0].Tool.Driver.Rules[0].ID, sd.Runs[0].Tool.Driver.Rules[1].ID})
	assert.Equal(t, "warning", sd.Runs[0].Tool.Driver.Rules[1].DefaultConfiguration.Level)
}

// TestFingerprints checks that a finding's fingerprint depends on its
// rule, file and message, not its line, and that identical findings in
// one file are told apart by their occurrence.
func TestFingerprints(t *testing.T) {
	t.Chdir(t.TempDir())
	fingerprints := func(l diag.List) []string {
		var out bytes.Buffer
		require.NoError(t, writeSARIF(&out, l, nil))
		var doc sarifDoc
		require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
		var fps []string
		for _, r := range doc.Runs[0].Results {
			fps = append(fps, r.PartialFingerprints["fsmgen/v1"])
		}
		return fps
	}
	at := func(file string, line int, msg string) diag.List {
		var l diag.List
		l.Errorf(diag.Pos{File: file, Line: line, Col: 1}, "%s", msg)
		return l
	}
	base := fingerprints(at("a.yaml", 3, `unknown state "X"`))
	require.Len(t, base, 1)
	assert.Equal(t, base, fingerprints(at("a.yaml", 30, `unknown state "X"`)), "a moved line keeps its fingerprint")
	assert.NotEqual(t, base, fingerprints(at("b.yaml", 3, `unknown state "X"`)), "another file")
	assert.NotEqual(t, base, fingerprints(at("a.yaml", 3, `unknown state "Y"`)), "another message")
	two := fingerprints(append(at("a.yaml", 3, `unknown state "X"`), at("a.yaml", 9, `unknown state "X"`)...))
	require.Len(t, two, 2)
	assert.Equal(t, base[0], two[0])
	assert.Equal(t, strings.TrimSuffix(base[0], ":1")+":2", two[1])
}

// TestArtifactURI checks the uris of SARIF locations.
func TestArtifactURI(t *testing.T) {
	tests := []struct {
		path, uri, base string
	}{
		{"specs/door.yaml", "specs/door.yaml", "%SRCROOT%"},
		{"/repo/specs/door.yaml", "specs/door.yaml", "%SRCROOT%"},
		{"./specs/../a b.yaml", "a%20b.yaml", "%SRCROOT%"},
		{"a:b.yaml", "./a:b.yaml", "%SRCROOT%"},
		{"..x.yaml", "..x.yaml", "%SRCROOT%"},
		{"../other/door.yaml", "file:///other/door.yaml", ""},
		{"/elsewhere/door.yaml", "file:///elsewhere/door.yaml", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			uri, base := artifactURI(filepath.FromSlash(tt.path), filepath.FromSlash("/repo"))
			assert.Equal(t, tt.uri, uri)
			assert.Equal(t, tt.base, base)
		})
	}
}

// TestFormatUsage checks the -format flag's errors.
func TestFormatUsage(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"check", "-format", "xml", "a.yaml"}, exitUsage, `-format "xml" is not one of text, json, sarif`},
		{[]string{"generate", "-format", "", "a.yaml"}, exitUsage, `-format "" is not one of text, json, sarif`},
		{[]string{"diagram", "-format", "json", "a.yaml"}, exitUsage, `flag provided but not defined: -format`},
		{[]string{"check", "-format", "json"}, exitUsage, `check needs at least one spec file`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := cli(t, t.TempDir(), tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, stderr, tt.stderr)
			assert.Empty(t, stdout)
		})
	}
}

// TestRealMessagesAreClassified runs check -format json on the checker's
// error corpus (internal/compiler/fsm/testdata/errors) and checks that every
// message it reports has a rule of its own.
func TestRealMessagesAreClassified(t *testing.T) {
	corpus, err := filepath.Abs(filepath.Join("..", "..", "internal", "compiler", "fsm", "testdata", "errors"))
	require.NoError(t, err)
	specs, err := filepath.Glob(filepath.Join(corpus, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, specs)
	code, stdout, stderr := cli(t, t.TempDir(), append([]string{"check", "-format", "json"}, specs...)...)
	require.Equal(t, exitError, code, stderr)
	var doc jsonReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Empty(t, doc.Error)
	require.Greater(t, len(doc.Diagnostics), 50)
	rules := map[string]bool{}
	for _, d := range doc.Diagnostics {
		assert.NotEqual(t, diag.Unclassified, d.Rule, "%s:%d: %s", d.File, d.Line, d.Message)
		rules[d.Rule] = true
	}
	assert.Greater(t, len(rules), 20, "the corpus covers many rules")
}

// TestDocsListEveryRule checks that docs/spec.md names every rule id in
// its section on what the checker reports.
func TestDocsListEveryRule(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "spec.md"))
	require.NoError(t, err)
	section := regexp.MustCompile(`(?s)\n## What the checker reports\n(.*?)\n## `).FindSubmatch(src)
	require.NotNil(t, section, "docs/spec.md has the section")
	for _, r := range diag.Rules() {
		assert.True(t, bytes.Contains(section[1], []byte("`"+r.ID+"`")), "docs/spec.md, What the checker reports, lists rule %s", r.ID)
	}
}
