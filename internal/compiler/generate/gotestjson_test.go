package generate_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// testResult is what go test -json said of one package: whether it
// passed, and what it printed (its build's and vet's output, the
// package's result line and the output of the tests that failed).
type testResult struct {
	passed bool
	output string
}

// testResults reads go test -json output by package, and returns the
// lines that were not JSON (the go command's own errors, on stderr)
// apart. A package's build output comes as build events named by the
// package's ID ("p [p.test]" for its test build), its tests' as test
// events.
func testResults(jsonOut string) (results map[string]testResult, stray string) {
	type key struct{ pkg, test string }
	results = map[string]testResult{}
	var order []key
	outputs := map[key]*strings.Builder{}
	failed := map[key]bool{}
	add := func(k key, s string) {
		if outputs[k] == nil {
			outputs[k] = &strings.Builder{}
			order = append(order, k)
		}
		outputs[k].WriteString(s)
	}
	for line := range strings.Lines(jsonOut) {
		var ev struct {
			ImportPath, Package, Test, Action, Output string
		}
		switch {
		case json.Unmarshal([]byte(line), &ev) != nil:
			stray += line
		case ev.ImportPath != "":
			pkg, _, _ := strings.Cut(ev.ImportPath, " ")
			add(key{pkg: pkg}, ev.Output)
		case ev.Package != "":
			k := key{ev.Package, ev.Test}
			add(k, ev.Output)
			failed[k] = failed[k] || ev.Action == "fail"
			if ev.Test == "" && ev.Action == "pass" {
				results[ev.Package] = testResult{passed: true}
			}
		}
	}
	for _, k := range order {
		if k.test != "" && !failed[k] {
			continue // a test that passed: only its name, its logs
		}
		r := results[k.pkg]
		r.output += outputs[k].String()
		results[k.pkg] = r
	}
	return results, stray
}

// TestTestResults reads go test -json output as the go command writes it
// for a package that passed, one whose vet failed its build and one with
// a failed test among passing ones.
func TestTestResults(t *testing.T) {
	t.Parallel()
	out := `{"ImportPath":"m/vet [m/vet.test]","Action":"build-output","Output":"# m/vet\n"}
{"ImportPath":"m/vet [m/vet.test]","Action":"build-output","Output":"vet.go:5:22: fmt.Sprintf format %d has arg \"s\" of wrong type string\n"}
{"ImportPath":"m/vet [m/vet.test]","Action":"build-fail"}
{"Action":"start","Package":"m/ok"}
{"Action":"run","Package":"m/ok","Test":"TestA"}
{"Action":"output","Package":"m/ok","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"m/ok","Test":"TestA"}
{"Action":"output","Package":"m/ok","Output":"ok  \tm/ok\t0.01s\tcoverage: 95.0% of statements\n"}
{"Action":"pass","Package":"m/ok"}
{"Action":"start","Package":"m/bad"}
{"Action":"output","Package":"m/bad","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"m/bad","Test":"TestA"}
{"Action":"output","Package":"m/bad","Test":"TestB","Output":"    b_test.go:9: deliberately\n"}
{"Action":"fail","Package":"m/bad","Test":"TestB"}
{"Action":"output","Package":"m/bad","Output":"FAIL\tm/bad\t0.01s\n"}
{"Action":"fail","Package":"m/bad"}
{"Action":"output","Package":"m/vet","Output":"FAIL\tm/vet [build failed]\n"}
{"Action":"fail","Package":"m/vet","FailedBuild":"m/vet [m/vet.test]"}
go: warning: a line of the go command's own
`
	results, stray := testResults(out)
	assert.Equal(t, map[string]testResult{
		"m/ok":  {passed: true, output: "ok  \tm/ok\t0.01s\tcoverage: 95.0% of statements\n"},
		"m/bad": {output: "FAIL\tm/bad\t0.01s\n    b_test.go:9: deliberately\n"},
		"m/vet": {output: "# m/vet\nvet.go:5:22: fmt.Sprintf format %d has arg \"s\" of wrong type string\nFAIL\tm/vet [build failed]\n"},
	}, results)
	assert.Equal(t, "go: warning: a line of the go command's own\n", stray)
}
