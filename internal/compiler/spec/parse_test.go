package spec_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

const valid = `version: 2
machine: Door
package: door
states:
  Closed:
    initial: true
    fields:
      count: int
      note: {type: string, doc: a note}
events:
  Push: {}
actions:
  Beep: {pure: true}
  Flash: {}
guards:
  ok:
    reads:
      count: int
effects:
  bump:
    reads: {count: int}
    sets:
      count: int
      note: string
transitions:
  - from: [Closed]
    on: Push
    guards:
      - if: ok
        to: Closed
        effect: bump
        action: [Beep, Flash]
      - else: true
        reject: no
`

func TestParseValid(t *testing.T) {
	f, diags := spec.Parse("door.yaml", []byte(valid))
	require.Empty(t, diags)
	assert.Equal(t, "Door", f.Machine.Value)
	assert.Equal(t, 2, f.Machine.Pos.Line)
	assert.Equal(t, 10, f.Machine.Pos.Col)
	require.Len(t, f.States, 1)
	assert.True(t, f.States[0].Initial.Value)
	require.Len(t, f.States[0].Fields, 2)
	assert.Equal(t, "string", f.States[0].Fields[1].Type.Value)
	assert.Equal(t, "a note", f.States[0].Fields[1].Doc.Value)
	require.Len(t, f.Actions, 2)
	assert.True(t, f.Actions[0].Pure.Value, "Beep is pure")
	assert.Equal(t, 13, f.Actions[0].Pure.Pos.Line)
	assert.Equal(t, 16, f.Actions[0].Pure.Pos.Col)
	assert.False(t, f.Actions[1].Pure.Set, "Flash does not say")
	require.Len(t, f.Guards, 1)
	require.Len(t, f.Guards[0].Reads, 1)
	assert.Equal(t, "count", f.Guards[0].Reads[0].Name.Value)
	require.Len(t, f.Effects, 1)
	require.Len(t, f.Effects[0].Sets, 2)
	assert.Equal(t, "note", f.Effects[0].Sets[1].Name.Value)
	assert.Equal(t, "string", f.Effects[0].Sets[1].Type.Value)
	require.Len(t, f.Transitions, 1)
	tr := f.Transitions[0]
	assert.Equal(t, 26, tr.Pos.Line)
	require.Len(t, tr.Guards, 2)
	assert.Equal(t, "ok", tr.Guards[0].If.Value)
	assert.True(t, tr.Guards[1].Else.Value)
	require.Len(t, tr.Guards[0].Actions, 2)
	assert.Equal(t, "Flash", tr.Guards[0].Actions[1].Value)
	assert.Equal(t, "no", tr.Guards[1].Reject.Value)
}

// TestParseHostile feeds files that are not specs, or attack the parser,
// and checks each gets a clear error naming the file, never a panic.
func TestParseHostile(t *testing.T) {
	bomb := "version: 2\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := range 8 {
		name := string(rune('b' + i))
		bomb += name + ": &" + name + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = name
	}
	tests := []struct {
		name, src, want string
	}{
		{"empty", "", `^x.yaml: spec is empty: start it with "version: 2"$`},
		{"only comments", "# nothing\n", `^x.yaml: spec is empty`},
		{"NUL byte", "version: 2\nmachine: \x00\n", `^x.yaml:2: spec contains a NUL byte`},
		{"invalid UTF-8", "version: 2\nmachine: \xff\xfe\n", `^x.yaml:2: spec is not valid UTF-8$`},
		{"tabs", "version: 2\nstates:\n\tA: {}\n", `^x.yaml:3:1: invalid YAML: .*tabs cannot indent YAML: use spaces`},
		{"a document marker alone", "---", `^x.yaml: spec is empty: start it with "version: 2"$`},
		{"not a mapping", "- a\n- b\n", `^x.yaml:1:1: spec must be a mapping of keys such as version, machine, states; found a list$`},
		{"scalar", "hello\n", `^x.yaml:1:1: spec must be a mapping`},
		{"unsupported version", "version: 7\n", `x.yaml:1:10: unsupported spec version "7": this fsmgen reads version 2`},
		{"version 1", "version: 1\n", `x.yaml:1:10: version 1 specs are no longer read: version 2 declares what each guard and effect reads and sets; see "From version 1" in docs/spec.md`},
		{"version not first", "machine: A\nversion: 2\n", `x.yaml:1:1: spec must start with "version: 2"`},
		{"duplicate key", "version: 2\nmachine: A\nmachine: B\n", `x.yaml:3:1: duplicate key "machine"`},
		{"misspelled key", "version: 2\nmachnie: A\n", `x.yaml:2:1: unknown key "machnie" \(did you mean "machine"\?\)`},
		{"alias bomb", bomb, `more than 100000 YAML nodes`},
		{"deep nesting", "version: 2\ndoc: " + strings.Repeat("[", 60) + strings.Repeat("]", 60) + "\n", `nested more than 48 levels deep`},
		{"too large", "version: 2\ndoc: " + strings.Repeat("x", spec.MaxSize) + "\n", `^x.yaml: spec is \d+ bytes, larger than the 1048576-byte limit`},
		{"wrong type", "version: 2\nstates: [a, b]\n", `x.yaml:2:9: expected a mapping of names, found a list`},
		{"imports as a list", "version: 2\nimports: [time]\n", `x.yaml:2:10: imports maps each package's qualifier to its import path, found a list: write imports: {time: time, chat: example.com/chat}`},
		{"reject: true", "version: 2\ntransitions:\n  - from: A\n    on: E\n    reject: true\n", `x.yaml:5:13: expected the reason the caller is told \(reject: the cart is empty\), found true`},
		{"reject with reasons", "version: 2\nstates:\n  Draft:\n    reject: {Pay: place the order first}\n", `x.yaml:4:13: expected a name or a list of names, found a mapping: a state's reject lists events; the reason for one goes on a row, \{from: Draft, on: EVENT, reject: "reason"\}`},
		{"done naming a state", "version: 2\nstates:\n  A:\n    done: B\n", `x.yaml:4:11: done is a transition, not a state name: write done: \{to: B\}`},
		{"breaks not a list", "version: 2\nbreaks: {change: state A}\n", `x.yaml:2:9: breaks is a list of the changes made on purpose, each with change and why`},
		{"a break without why", "version: 2\nbreaks:\n  - change: state A\n", `x.yaml:3:5: a declared break names the change \(as fsmgen diff names it\) and says why`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotPanics(t, func() {
				_, diags := spec.Parse("x.yaml", []byte(tt.src))
				require.True(t, diags.HasErrors(), "no error for %q", tt.name)
				assert.Regexp(t, tt.want, diags.Error())
			})
		})
	}
}

// TestYAMLSyntaxErrors checks that a YAML syntax error points at the line
// and column of the problem, where yaml.v3 gave only a line, and for the
// errors of its parser the line before the mapping or list that holds the
// problem (a block mapping starting on line 4 with a bad key on line 6
// was "line 3"). The file ending inside a quoted string or a flow
// collection is reported where it starts.
func TestYAMLSyntaxErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{
			name: "a key indented less than its siblings",
			src:  "version: 2\nmachine: Door\nstates:\n  A:\n    initial: true\n   doc: x\nevents: {}\n",
			want: "x.yaml:6:4: invalid YAML: did not find expected key (while parsing a block mapping that starts at line 4, column 3)",
		},
		{
			name: "a key indented more than its siblings",
			src:  "version: 2\nmachine: Door\nstates:\n  A:\n    initial: true\n      doc: x\nevents: {}\n",
			want: "x.yaml:6:10: invalid YAML: mapping values are not allowed in this context",
		},
		{
			name: "a list item among the keys of a mapping",
			src:  "version: 2\nstates:\n  A: {}\n  - B\n",
			want: "x.yaml:4:3: invalid YAML: did not find expected key (while parsing a block mapping that starts at line 3, column 3)",
		},
		{
			name: "an unclosed double quote",
			src:  "version: 2\nmachine: \"Door\npackage: door\nstates:\n  A: {}\n",
			want: "x.yaml:2:10: invalid YAML: the file ends while scanning a quoted scalar that starts here: close the quote",
		},
		{
			name: "an unclosed single quote",
			src:  "version: 2\nmachine: Door\ndoc: 'abc\nstates: {}\n",
			want: "x.yaml:3:6: invalid YAML: the file ends while scanning a quoted scalar that starts here: close the quote",
		},
		{
			name: "an unclosed flow mapping",
			src:  "version: 2\nmachine: Door\nstates:\n  A: {initial: true\n  B: {}\nevents: {}\n",
			want: "x.yaml:5:4: invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping that starts at line 4, column 6)",
		},
		{
			name: "an unclosed flow sequence",
			src:  "version: 2\nmachine: Door\nevents: [A, B\nstates: {}\n",
			want: "x.yaml:4:7: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence that starts at line 3, column 9)",
		},
		{
			name: "a flow mapping the file ends in",
			src:  "version: 2\nmachine: Door\nstates: {A: {}",
			want: "x.yaml:3:9: invalid YAML: the file ends while parsing a flow mapping that starts here: close it with }",
		},
		{
			name: "a colon in a plain value",
			src:  "version: 2\nmachine: Door: x\nstates: {}\n",
			want: "x.yaml:2:14: invalid YAML: mapping values are not allowed in this context",
		},
		{
			name: "a tab indenting a key",
			src:  "version: 2\nstates:\n  A:\n\t  initial: true\n",
			want: "x.yaml:4:1: invalid YAML: found character that cannot start any token (tabs cannot indent YAML: use spaces)",
		},
		{
			name: "a position after text in another script",
			src:  "version: 2\ndoc: \"größe\nstates: {}\n",
			want: "x.yaml:2:6: invalid YAML: the file ends while scanning a quoted scalar that starts here: close the quote",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, diags := spec.Parse("x.yaml", []byte(tt.src))
			assert.Nil(t, f)
			require.Len(t, diags, 1, "%s", diags)
			assert.Equal(t, tt.want, diags[0].String())
			assert.Equal(t, "yaml-syntax", diags[0].Rule)
		})
	}
}
