package agentexec

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadLine checks the line reader at the edges of its limit and of
// its buffer.
func TestReadLine(t *testing.T) {
	t.Parallel()
	type line struct {
		text string
		size int
	}
	long := strings.Repeat("y", 40)
	tests := []struct {
		name  string
		input string
		limit int
		want  []line
	}{
		{"lines", "a\nbc\n", 10, []line{{"a", 1}, {"bc", 2}, {"", 0}}},
		{"last line without newline", "a\nbc", 10, []line{{"a", 1}, {"bc", 2}}},
		{"at the limit", "12345\n", 5, []line{{"12345", 5}, {"", 0}}},
		{"one over the limit", "123456\nok\n", 5, []line{{"", 6}, {"ok", 2}, {"", 0}}},
		{"over the limit at the end", "123456", 5, []line{{"", 6}}},
		{"longer than the buffer", long + "\n" + long + "x\n", 40, []line{{long, 40}, {"", 41}, {"", 0}}},
		{"empty", "", 5, []line{{"", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			br := bufio.NewReaderSize(strings.NewReader(tt.input), 16)
			var got []line
			for {
				text, size, err := readLine(br, tt.limit)
				got = append(got, line{text, size})
				if err != nil {
					require.True(t, errors.Is(err, io.EOF), "error: %v", err)
					break
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestOutputBudget checks how a round's results share the output budget.
func TestOutputBudget(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 3000)
	tests := []struct {
		name  string
		limit int
		in    []string
		want  []string // the results, or their beginning followed by "…" when cut
	}{
		{"within", 100, []string{"one", "two"}, []string{"one", "two"}},
		{"the last one cut to the minimum", 3000, []string{big, big}, []string{big, big[:minCut] + "…"}},
		{"cut to what is left", 6000, []string{big, big + big}, []string{big, big + "…"}},
		{"small results pass the minimum after the limit", 3000, []string{big, "short"}, []string{big, "short"}},
		{"whole characters", 2049, []string{strings.Repeat("é", 1025) + "x", ""}, []string{strings.Repeat("é", 1024) + "…", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newOutputBudget(tt.limit)
			for i, in := range tt.in {
				got := b.take(in)
				if want, cut := strings.CutSuffix(tt.want[i], "…"); cut {
					assert.True(t, strings.HasPrefix(got, want+"\n[... cut: this result is "), "result %d: %.80q", i, got)
					assert.NotContains(t, strings.TrimPrefix(got, want), "a\n[", "cut at the right place")
				} else {
					assert.Equal(t, want, got, "result %d", i)
				}
			}
		})
	}
}
