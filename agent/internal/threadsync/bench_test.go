package threadsync_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// BenchmarkSaved measures what a save costs the turn when the thread is
// synced: the Saved hook's copy and hand-over, on the agent's loop
// goroutine, for a thread of 10 to 10,000 messages of 1 KiB each, each
// save adding one (run with -benchtime=2000x: the thread grows with
// b.N, and the check of the messages already copied with it). The
// push itself runs on the pusher's goroutine, which this benchmark does
// not start: the versions collapse into the newest, as they do while a
// push is in flight.
func BenchmarkSaved(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			msg, err := json.Marshal(chat.Message{Role: chat.RoleUser, Content: strings.Repeat("x", 1024)})
			if err != nil {
				b.Fatal(err)
			}
			th := &threadwire.Thread{Version: threadwire.Version, ID: "t-1", Created: time.Now(), Updated: time.Now()}
			for range n {
				th.Messages = append(th.Messages, msg)
			}
			p, err := threadsync.New(threadsync.Config{URL: "http://127.0.0.1:1"})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				// A save adds a message, as a turn's do.
				th.Messages = append(th.Messages, msg)
				p.Saved(th)
			}
		})
	}
}
