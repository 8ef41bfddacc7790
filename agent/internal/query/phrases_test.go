package query_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/query"
)

// TestPhrasesStreaming feeds replies delta by delta, split mid-word and
// mid-path, and checks at which delta the query is reported and where the
// reply is cut.
func TestPhrasesStreaming(t *testing.T) {
	tests := []struct {
		name   string
		deltas []string
		at     int // the index of the delta that completes the query; -1: at Flush; -2: never
		want   chat.Query
		cut    string // the reply up to Match.End
	}{
		{
			name:   "a path split mid-name waits for the end of the sentence",
			deltas: []string{"I need to re", "ad src/ma", "in.rs", ". Then I", " will fix it."},
			at:     3, want: chat.Query{Kind: chat.QueryRead, Path: "src/main.rs"},
			cut: "I need to read src/main.rs.",
		},
		{
			name:   "a period at the end of a delta is decided by the next one",
			deltas: []string{"Let me read go.mod.", "\nMore text"},
			at:     1, want: chat.Query{Kind: chat.QueryRead, Path: "go.mod"},
			cut: "Let me read go.mod.\n", // the newline ends the sentence
		},
		{
			name:   "the dot of an extension is not the end of a sentence",
			deltas: []string{"Let me read go.", "mod first.", " ok"},
			at:     2, want: chat.Query{Kind: chat.QueryRead, Path: "go.mod"},
			cut: "Let me read go.mod first.",
		},
		{
			name:   "a query in the last sentence is reported at Flush",
			deltas: []string{"What's in the env", "ironment?"},
			at:     -1, want: chat.Query{Kind: chat.QueryEnvironment},
			cut: "What's in the environment?",
		},
		{
			name:   "a protocol line ends at its newline",
			deltas: []string{"Sure.\nQUE", "RY: read cmd/", "main.go\nand more"},
			at:     2, want: chat.Query{Kind: chat.QueryRead, Path: "cmd/main.go"},
			cut: "Sure.\nQUERY: read cmd/main.go\n",
		},
		{
			name:   "a protocol tag is cut as soon as it closes",
			deltas: []string{`ok <query kind="list" pa`, `th="internal"/> trailing`},
			at:     1, want: chat.Query{Kind: chat.QueryList, Path: "internal"},
			cut: `ok <query kind="list" path="internal"/>`,
		},
		{
			name:   "a fenced code block is skipped",
			deltas: []string{"Here:\n```\nLet me read ", "go.mod.\n```\n", "Done."},
			at:     -2,
		},
		{
			name:   "text after a code block is read again",
			deltas: []string{"```sh\nls\n```\nI need to see Makefile.", " Thanks."},
			at:     1, want: chat.Query{Kind: chat.QueryRead, Path: "Makefile"},
			cut: "```sh\nls\n```\nI need to see Makefile.",
		},
		{
			name:   "a narration asks nothing",
			deltas: []string{"I read src/main.rs and ", "fixed it."},
			at:     -2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := query.Phrases{}.NewDetector()
			text, at := "", -2
			var m query.Match
			var ok bool
			for i, delta := range tt.deltas {
				text += delta
				if m, ok = d.Feed(delta); ok {
					at = i
					break
				}
			}
			if !ok {
				if m, ok = d.Flush(); ok {
					at = -1
				}
			}
			require.Equal(t, tt.at, at, "the delta that completes the query (-1: Flush, -2: none)")
			if !ok {
				return
			}
			assert.Equal(t, tt.want, m.Query)
			assert.Equal(t, tt.cut, text[:m.End])
		})
	}
}

// TestPhrasesReportsOnce checks that a detector reports one query, the
// first, and nothing after it.
func TestPhrasesReportsOnce(t *testing.T) {
	d := query.Phrases{}.NewDetector()
	m, ok := d.Feed("Let me read a.go. Let me read b.go. ")
	require.True(t, ok)
	assert.Equal(t, "a.go", m.Query.Path)
	_, ok = d.Feed("Let me read c.go. ")
	assert.False(t, ok)
	_, ok = d.Flush()
	assert.False(t, ok)
}

// TestProtocol checks the forms of the protocol's queries.
func TestProtocol(t *testing.T) {
	tests := []struct {
		line string
		want chat.Query
		ok   bool
	}{
		{"QUERY: read src/main.rs", chat.Query{Kind: chat.QueryRead, Path: "src/main.rs"}, true},
		{"query: cat `a b.txt`", chat.Query{Kind: chat.QueryRead, Path: "a b.txt"}, true},
		{"QUERY: list", chat.Query{Kind: chat.QueryList, Path: "."}, true},
		{"QUERY: ls ./cmd/", chat.Query{Kind: chat.QueryList, Path: "cmd"}, true},
		{`QUERY: search "a in b" in docs`, chat.Query{Kind: chat.QuerySearch, Pattern: "a in b", Path: "docs"}, true},
		{"QUERY: grep TODO", chat.Query{Kind: chat.QuerySearch, Pattern: "TODO"}, true},
		{"QUERY: env", chat.Query{Kind: chat.QueryEnvironment}, true},
		{"QUERY: project", chat.Query{Kind: chat.QueryProject}, true},
		{`<query kind="environment"/>`, chat.Query{Kind: chat.QueryEnvironment}, true},
		{"QUERY: read", chat.Query{}, false},       // no path
		{"QUERY: delete src", chat.Query{}, false}, // no such query
		{"QUERY: search", chat.Query{}, false},     // no pattern
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			m, ok := query.Detect(query.Phrases{}, tt.line)
			require.Equal(t, tt.ok, ok, "%+v", m)
			if ok {
				assert.Equal(t, tt.want, m.Query)
			}
		})
	}
}
