package prose_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/prose"
)

func TestArticle(t *testing.T) {
	t.Parallel()
	for word, want := range map[string]string{
		"Upload":    "an",
		"order":     "an",
		"Event":     "an",
		"action":    "an",
		"state":     "a",
		"uint64":    "a",
		"Unit":      "a",
		"Union":     "a",
		"Uninstall": "an",
		"Undo":      "an",
		"User":      "a",
		"usual":     "a",
		"Euro":      "a",
		"OneShot":   "a",
		"":          "a",
		"Idle":      "an",
		"TimeWait":  "a",
	} {
		assert.Equal(t, want, prose.Article(word), "%q", word)
	}
}
