package term_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/agent/internal/term"
)

// TestRows checks how a line is cut into a terminal's rows: every row
// but the last full, a wide character two columns, never split.
func TestRows(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, line string
		cols       int
		want       []string
	}{
		{"empty", "", 10, nil},
		{"short", "hello", 10, []string{"hello"}},
		{"exactly full", "0123456789", 10, []string{"0123456789"}},
		{"one over", "0123456789a", 10, []string{"0123456789", "a"}},
		{"wide characters", "日本語です", 5, []string{"日本", "語で", "す"}},
		{"a tab", "ab\tcd", 9, []string{"ab\tc", "d"}},
		{"no width", "abc", 0, []string{"ab", "c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, term.Rows(tt.line, tt.cols))
		})
	}
}
