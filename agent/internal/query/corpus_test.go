package query_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/query"
)

// corpusEntry is a model's reply and the query it asks (nil: none).
type corpusEntry struct {
	Reply string      `yaml:"reply"`
	Want  *chat.Query `yaml:"want"`
}

// The floors TestCorpus holds the detector to on the corpus; the figures
// are reported in docs/queries.md.
const (
	minPrecision = 0.95
	minRecall    = 0.90
	// On the held-out replies.
	minHoldoutPrecision = 0.95
	minHoldoutRecall    = 0.90
)

// loadCorpus reads testdata/corpus.yaml.
func loadCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.yaml")
	require.NoError(t, err)
	var entries []corpusEntry
	require.NoError(t, yaml.Unmarshal(b, &entries))
	require.GreaterOrEqual(t, len(entries), 50, "the corpus must hold at least 50 replies")
	return entries
}

// streamed feeds text to a new detector of s in pieces of n bytes, as a
// stream delivers it, and returns the query it reports.
func streamed(s query.Strategy, text string, n int) (query.Match, bool) {
	d := s.NewDetector()
	for i := 0; i < len(text); i += n {
		if m, ok := d.Feed(text[i:min(i+n, len(text))]); ok {
			return m, true
		}
	}
	return d.Flush()
}

// TestCorpus measures the precision and recall of Phrases over the corpus
// of model replies, fed whole and in pieces of 1, 3 and 7 bytes (which
// must all agree), and holds them to the floors.
func TestCorpus(t *testing.T) {
	entries := loadCorpus(t)
	var detected, wanted, correct int
	for i, e := range entries {
		m, ok := query.Detect(query.Phrases{}, e.Reply)
		for _, n := range []int{1, 3, 7} {
			ms, oks := streamed(query.Phrases{}, e.Reply, n)
			assert.Equal(t, ok, oks, "entry %d fed in pieces of %d: %q", i+1, n, e.Reply)
			assert.Equal(t, m, ms, "entry %d fed in pieces of %d: %q", i+1, n, e.Reply)
		}
		if ok {
			detected++
			assert.LessOrEqual(t, m.End, len(e.Reply))
			assert.Contains(t, e.Reply[:m.End], m.Sentence, "entry %d: the reply is cut after the query's sentence", i+1)
		}
		if e.Want != nil {
			wanted++
		}
		switch {
		case ok && e.Want != nil && m.Query == *e.Want:
			correct++
		case ok && e.Want != nil:
			t.Logf("wrong query: entry %d %q: got %+v, want %+v", i+1, e.Reply, m.Query, *e.Want)
		case ok:
			t.Logf("false positive: entry %d %q: got %+v from %q", i+1, e.Reply, m.Query, m.Sentence)
		case e.Want != nil:
			t.Logf("missed: entry %d %q: want %+v", i+1, e.Reply, *e.Want)
		}
	}
	precision := float64(correct) / float64(max(detected, 1))
	recall := float64(correct) / float64(max(wanted, 1))
	t.Logf("corpus: %d replies, %d ask a query; detected %d, %d right: precision %.3f, recall %.3f",
		len(entries), wanted, detected, correct, precision, recall)
	assert.GreaterOrEqual(t, precision, minPrecision, "precision")
	assert.GreaterOrEqual(t, recall, minRecall, "recall")
}

// TestCorpusHasBoth checks that the corpus keeps replies that ask and
// replies that do not, of every kind.
func TestCorpusHasBoth(t *testing.T) {
	kinds := map[chat.QueryKind]int{}
	none := 0
	for _, e := range loadCorpus(t) {
		if e.Want == nil {
			none++
			continue
		}
		kinds[e.Want.Kind]++
		assert.NotEmpty(t, strings.TrimSpace(e.Reply))
	}
	assert.GreaterOrEqual(t, none, 25, "replies that ask nothing")
	for _, k := range []chat.QueryKind{chat.QueryRead, chat.QueryList, chat.QuerySearch, chat.QueryEnvironment, chat.QueryProject} {
		assert.GreaterOrEqual(t, kinds[k], 3, "replies that ask a %s query", k)
	}
}

// TestHoldout reports the figures of Phrases on replies it was never tuned
// on (testdata/holdout.yaml), with lower floors: what a new phrasing
// meets.
func TestHoldout(t *testing.T) {
	b, err := os.ReadFile("testdata/holdout.yaml")
	require.NoError(t, err)
	var entries []corpusEntry
	require.NoError(t, yaml.Unmarshal(b, &entries))
	var detected, wanted, correct int
	for i, e := range entries {
		m, ok := query.Detect(query.Phrases{}, e.Reply)
		if ok {
			detected++
		}
		if e.Want != nil {
			wanted++
		}
		switch {
		case ok && e.Want != nil && m.Query == *e.Want:
			correct++
		case ok:
			t.Logf("holdout: entry %d %q: got %+v, want %+v", i+1, e.Reply, m.Query, e.Want)
		case e.Want != nil:
			t.Logf("holdout: missed entry %d %q: want %+v", i+1, e.Reply, *e.Want)
		}
	}
	precision := float64(correct) / float64(max(detected, 1))
	recall := float64(correct) / float64(max(wanted, 1))
	t.Logf("holdout: %d replies, %d ask a query; detected %d, %d right: precision %.3f, recall %.3f",
		len(entries), wanted, detected, correct, precision, recall)
	assert.GreaterOrEqual(t, precision, minHoldoutPrecision, "precision")
	assert.GreaterOrEqual(t, recall, minHoldoutRecall, "recall")
}
