package export_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/export"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// load checks the spec at path and returns its machine.
func load(t *testing.T, path string) (*fsm.Machine, []byte) {
	t.Helper()
	res, err := generate.Load(path)
	require.NoError(t, err)
	require.NotNil(t, res.Machine, "%s does not check:\n%s", path, res.Diags.Error())
	return res.Machine, res.Source
}

// TestGolden exports every spec of the repository in both formats and
// compares the output, and what the export reports, with
// testdata/golden/SPEC.{xstate.json,scxml,xstate.txt,scxml.txt}; -update
// rewrites them.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, path := range specPaths(t) {
		m, _ := load(t, path)
		for _, f := range export.Formats {
			name := specKey(path) + "." + string(f)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				out, diags, err := export.Export(m, f)
				require.NoError(t, err)
				require.False(t, diags.HasErrors(), "the export of %s was refused:\n%s", path, diags.Error())
				ext := map[export.Format]string{export.XState: ".json", export.SCXML: ""}[f]
				golden(t, filepath.Join("testdata", "golden", name+ext), out)
				golden(t, filepath.Join("testdata", "golden", name+".txt"), []byte(report(diags)))
				again, _, err := export.Export(m, f)
				require.NoError(t, err)
				assert.Equal(t, string(out), string(again), "the same machine exports to the same bytes")
			})
		}
	}
}

// report writes diagnostics one a line, "line:col: message", the file
// left out so that the goldens do not depend on the directory.
func report(diags diag.List) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "%d:%d: %s: %s\n", d.Pos.Line, d.Pos.Col, d.Severity, d.Msg)
	}
	return b.String()
}

// golden compares got with the file at path, or writes it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to write it")
	assert.Equal(t, string(want), string(got), "%s differs (run go test -update if the change is intended)", path)
}

// TestXStateConfigShape checks the XState configs of every spec: valid
// JSON; every target is the id of a state of the config; every guard,
// action and delay is a name the spec declares; a compound state's
// initial is one of its children.
func TestXStateConfigShape(t *testing.T) {
	t.Parallel()
	for _, path := range specPaths(t) {
		t.Run(specKey(path), func(t *testing.T) {
			t.Parallel()
			m, _ := load(t, path)
			out, _, err := export.Export(m, export.XState)
			require.NoError(t, err)
			var root map[string]any
			require.NoError(t, json.Unmarshal(out, &root))
			require.Equal(t, m.Name, root["id"])
			ids := map[string]bool{}
			var collect func(id string, node map[string]any)
			collect = func(id string, node map[string]any) {
				ids["#"+id] = true
				states, _ := node["states"].(map[string]any)
				if init, ok := node["initial"].(string); ok {
					assert.Contains(t, states, init, "%s: initial", id)
				}
				for k, v := range states {
					collect(id+"."+k, v.(map[string]any))
				}
			}
			collect(m.Name, root)
			regional := len(m.RegionLeaves()) + len(m.Groups())
			for _, reg := range m.Regions {
				regional += len(reg.Composites)
			}
			assert.Len(t, ids, len(m.States)+len(m.Composites)+regional+len(m.Histories)+1, "a node per state (those inside regions too), one per history, and the root")
			names := map[string]bool{}
			for _, a := range m.Actions {
				names[a.Name] = !a.Builtin
			}
			for _, fn := range m.Effects {
				names[fn.Name] = true
			}
			guards := map[string]bool{}
			for _, fn := range m.Guards {
				guards[fn.Name] = true
			}
			var check func(node map[string]any)
			checkTransition := func(tr map[string]any) {
				if target, ok := tr["target"].(string); ok {
					assert.True(t, ids[target], "target %s is no state's id", target)
				}
				switch g := tr["guard"].(type) {
				case string:
					assert.True(t, guards[g], "guard %s is not declared", g)
				case map[string]any:
					// In(State): the guard's params name the state's id.
					assert.Regexp(t, `^In\(\w+\)$`, g["type"])
					params, _ := g["params"].(map[string]any)
					id, _ := params["stateValue"].(string)
					assert.True(t, ids[id], "In guard %v names no state's id", g["type"])
					assert.True(t, strings.HasSuffix(id, "."+strings.TrimSuffix(strings.TrimPrefix(g["type"].(string), "In("), ")")), "In guard %v: %s", g["type"], id)
				}
				acts, _ := tr["actions"].([]any)
				for _, a := range acts {
					assert.True(t, names[a.(string)], "action %v is no action or effect", a)
				}
			}
			transitions := func(v any) {
				switch v := v.(type) {
				case map[string]any:
					checkTransition(v)
				case []any:
					for _, tr := range v {
						checkTransition(tr.(map[string]any))
					}
				}
			}
			check = func(node map[string]any) {
				for _, key := range []string{"on", "after"} {
					group, _ := node[key].(map[string]any)
					for _, v := range group {
						transitions(v)
					}
				}
				transitions(node["always"])
				for _, key := range []string{"entry", "exit"} {
					acts, _ := node[key].([]any)
					for _, a := range acts {
						assert.True(t, names[a.(string)], "%s action %v is no action or effect", key, a)
					}
				}
				states, _ := node["states"].(map[string]any)
				for _, v := range states {
					check(v.(map[string]any))
				}
			}
			check(root)
		})
	}
}

// TestSCXMLWellFormed parses the SCXML document of every spec as XML and
// checks its structure: the root is <scxml> of the SCXML namespace,
// version 1.0; ids are unique; every transition's target and every
// initial attribute name a state; an initial names a child; every
// <cancel> cancels a <send> of its state's <onentry>, and no two <send>s
// have one id; no transition
// carries executable content other than <script> and <send>.
func TestSCXMLWellFormed(t *testing.T) {
	t.Parallel()
	for _, path := range specPaths(t) {
		t.Run(specKey(path), func(t *testing.T) {
			t.Parallel()
			m, _ := load(t, path)
			out, _, err := export.Export(m, export.SCXML)
			require.NoError(t, err)
			doc := parseXML(t, out)
			require.Equal(t, "scxml", doc.XMLName.Local)
			require.Equal(t, "http://www.w3.org/2005/07/scxml", doc.XMLName.Space)
			assert.Equal(t, "1.0", doc.attr("version"))
			assert.Equal(t, "ecmascript", doc.attr("datamodel"))
			ids := map[string]*element{}
			var states func(e *element)
			states = func(e *element) {
				for _, c := range e.Children {
					if slices.Contains([]string{"state", "parallel", "final", "history"}, c.XMLName.Local) {
						id := c.attr("id")
						assert.NotContains(t, ids, id, "id %s twice", id)
						ids[id] = c
					}
					states(c)
				}
			}
			states(doc)
			assert.GreaterOrEqual(t, len(ids), len(m.States)+len(m.Composites))
			sendIDs := map[string]bool{}
			var walk func(e *element)
			walk = func(e *element) {
				if init := e.attr("initial"); init != "" {
					assert.True(t, slices.ContainsFunc(e.Children, func(c *element) bool { return c.attr("id") == init }), "initial %s of %s is not a child", init, e.attr("id"))
				}
				switch e.XMLName.Local {
				case "transition":
					// A target is IDREFS: a history of a parallel state
					// enters all its regions.
					for _, target := range strings.Fields(e.attr("target")) {
						assert.Contains(t, ids, target, "target")
					}
					for _, c := range e.Children {
						assert.Contains(t, []string{"script", "send"}, c.XMLName.Local, "content of a transition")
					}
				case "state", "parallel":
					var sends, cancels []string
					for _, c := range e.Children {
						for _, cc := range c.Children {
							switch {
							case c.XMLName.Local == "onentry" && cc.XMLName.Local == "send" && cc.attr("id") != "":
								// <cancel> cancels every delayed event with
								// its sendid (SCXML 1.0 §6.3).
								assert.NotContains(t, sendIDs, cc.attr("id"), "send id %s twice", cc.attr("id"))
								sendIDs[cc.attr("id")] = true
								sends = append(sends, cc.attr("id"))
							case c.XMLName.Local == "onexit" && cc.XMLName.Local == "cancel":
								cancels = append(cancels, cc.attr("sendid"))
							}
						}
					}
					assert.Equal(t, sends, cancels, "state %s cancels the timers it starts", e.attr("id"))
				}
				for _, c := range e.Children {
					walk(c)
				}
			}
			walk(doc)
		})
	}
}

// element is an XML element, parsed generically.
type element struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []*element `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (e *element) attr(name string) string {
	for _, a := range e.Attrs {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// parseXML checks that data is well-formed XML, one root element and
// nothing after it, and returns the root.
func parseXML(t *testing.T, data []byte) *element {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the document is not well-formed XML")
	}
	var root element
	require.NoError(t, xml.Unmarshal(data, &root))
	return &root
}
