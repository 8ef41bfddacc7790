package diag_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

func TestLines(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"a\nb\n", []string{"a", "b", ""}},
		{"a\r\nb", []string{"a", "b"}},
		{"\r0", []string{"", "0"}},
		{"a\u2028b\u0085c\u2029d", []string{"a", "b", "c", "d"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, diag.Lines([]byte(tt.src)), "%q", tt.src)
	}
}

func TestExcerpt(t *testing.T) {
	at := func(line, col int) diag.Diagnostic {
		return diag.Diagnostic{Pos: diag.Pos{File: "x.yaml", Line: line, Col: col}, Msg: "m"}
	}
	tests := []struct {
		name string
		src  string
		d    diag.Diagnostic
		want string
	}{
		{"caret under the column", "a: 1\nbb: 2\n", at(2, 5), "    bb: 2\n        ^\n"},
		{"characters, not bytes", "é: Ünknown\n", at(1, 4), "    é: Ünknown\n       ^\n"},
		{"tabs kept for alignment", "\tx: y\n", at(1, 2), "    \tx: y\n    \t^\n"},
		{"a lone CR ends a line", "\r0", at(2, 1), "    0\n    ^\n"},
		{"no column", "abc\n", at(1, 0), "    abc\n"},
		{"no line", "abc\n", at(0, 0), ""},
		{"past the end", "abc\n", at(9, 1), ""},
		{"control characters shown as spaces", "a\x1bb\n", at(1, 1), "    a b\n    ^\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, diag.Excerpt([]byte(tt.src), tt.d))
		})
	}
}

func TestListSortAndError(t *testing.T) {
	var l diag.List
	l.Errorf(diag.Pos{File: "b.yaml", Line: 1, Col: 1}, "second file")
	l.Warnf(diag.Pos{File: "a.yaml", Line: 3, Col: 2}, "a warning")
	l.Errorf(diag.Pos{File: "a.yaml", Line: 3, Col: 2}, "an error")
	l.Errorf(diag.Pos{File: "a.yaml", Line: 3, Col: 2}, "an error")
	l.Sort()
	assert.Equal(t, "a.yaml:3:2: an error\na.yaml:3:2: warning: a warning\nb.yaml:1:1: second file", l.Error())
	assert.True(t, l.HasErrors())
	assert.Len(t, l.Errors(), 2)
	assert.Len(t, l.Warnings(), 1)
	assert.Error(t, l.Err())
	assert.NoError(t, l.Warnings().Err())
}

func TestNote(t *testing.T) {
	tests := []struct {
		name  string
		build func(l *diag.List)
		notes [][]string // the notes of each diagnostic, in order
		text  string     // l.Error()
	}{
		{
			name:  "a note on an empty list does nothing",
			build: func(l *diag.List) { l.Note("lost") },
			text:  "",
		},
		{
			name: "notes go to the diagnostic added last",
			build: func(l *diag.List) {
				l.Errorf(diag.Pos{File: "a.yaml", Line: 1, Col: 1}, "first")
				l.Note("one")
				l.Warnf(diag.Pos{File: "a.yaml", Line: 2, Col: 1}, "second")
				l.Note("two")
				l.Note("three")
			},
			notes: [][]string{{"one"}, {"two", "three"}},
			text:  "a.yaml:1:1: first\n    note: one\na.yaml:2:1: warning: second\n    note: two\n    note: three",
		},
		{
			name: "a note's own lines are indented",
			build: func(l *diag.List) {
				l.Errorf(diag.Pos{File: "a.yaml"}, "whole file")
				l.Note("path:\nA -E-> B")
			},
			notes: [][]string{{"path:\nA -E-> B"}},
			text:  "a.yaml: whole file\n    note: path:\n          A -E-> B",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l diag.List
			tt.build(&l)
			var notes [][]string
			for _, d := range l {
				notes = append(notes, d.Notes)
			}
			assert.Equal(t, tt.notes, notes)
			assert.Equal(t, tt.text, l.Error())
		})
	}
}

func TestSortKeepsNotes(t *testing.T) {
	var l diag.List
	at := diag.Pos{File: "a.yaml", Line: 3, Col: 1}
	l.Errorf(at, "unknown state %q", "X")
	l.Note("b")
	l.Errorf(at, "unknown state %q", "X")
	l.Note("a")
	l.Errorf(at, "unknown state %q", "X")
	l.Note("a")
	l.Sort()
	require.Len(t, l, 2, "exact duplicates, notes included, are dropped")
	assert.Equal(t, []string{"a"}, l[0].Notes)
	assert.Equal(t, []string{"b"}, l[1].Notes)
	assert.Equal(t, "unknown-name", l[0].Rule)
}

func TestSeverityString(t *testing.T) {
	assert.Equal(t, "error", diag.Error.String())
	assert.Equal(t, "warning", diag.Warning.String())
}

func TestCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		want string
	}{
		{0, "0 changes"},
		{1, "1 change"},
		{2, "2 changes"},
		{147, "147 changes"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, diag.Count(tt.n, "change"))
	}
}
