package chat_test

import (
	"testing"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// BenchmarkAppend appends one message per op to a conversation that grows
// to 100,000 messages and then starts again empty: the amortised cost of
// storing a message, growth included.
func BenchmarkAppend(b *testing.B) {
	msg := chat.Message{Role: chat.RoleTool, Content: "output", ToolCallID: "toolu_01", ToolName: "read_file"}
	c := chat.NewConversation("T-bench")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if c.Len() == 100_000 {
			c = chat.NewConversation("T-bench")
		}
		c = c.Append(msg)
	}
}
