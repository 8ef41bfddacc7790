package query_test

import (
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/agent/internal/query"
)

// benchReply is a long reply that asks nothing: prose that mentions
// files, and a code block, as a model's answer is.
var benchReply = strings.Repeat("The handler in server/handlers.go validates the token first; "+
	"the retry loop in runtime/retry.go doubles the delay. I updated the Makefile so that tests run with -race.\n"+
	"```go\nfunc main() { println(\"read the file\") }\n```\n", 40)

// BenchmarkPhrases measures what the detector adds to a streamed reply:
// the reply is fed in deltas of 16 bytes, about what a provider streams
// (a few tokens), and asks nothing, so every sentence is classified.
func BenchmarkPhrases(b *testing.B) {
	b.SetBytes(int64(len(benchReply)))
	b.ReportAllocs()
	for b.Loop() {
		d := query.Phrases{}.NewDetector()
		for i := 0; i < len(benchReply); i += 16 {
			if _, ok := d.Feed(benchReply[i:min(i+16, len(benchReply))]); ok {
				b.Fatal("the reply asks nothing")
			}
		}
		if _, ok := d.Flush(); ok {
			b.Fatal("the reply asks nothing")
		}
	}
}
