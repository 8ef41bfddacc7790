package emit

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParagraphLines(t *testing.T) {
	t.Parallel()
	long := strings.TrimSpace(strings.Repeat("word ", wrapAt/5+4))
	tests := []struct {
		name string
		ps   []string
		want []string
	}{
		{"none", nil, nil},
		{"one", []string{"One line."}, []string{"One line."}},
		{"two, an empty line between", []string{"First.", "Second."}, []string{"First.", "", "Second."}},
		{"blank ones left out", []string{"", "First.", " \n", "Second.", ""}, []string{"First.", "", "Second."}},
		{"only blank ones", []string{"", "\t"}, nil},
		{"a paragraph's own lines kept", []string{"a\nb", "c"}, []string{"a", "b", "", "c"}},
		{"long ones wrapped", []string{long}, docLines(long)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, paragraphLines(tt.ps...))
		})
	}
	assert.Greater(t, len(docLines(long)), 1, "the long paragraph is wrapped")
}
