package behavior_test

import (
	"testing"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
)

func BenchmarkZZRound(b *testing.B) {
	a, _ := behavior.New(behavior.DefaultConfig())
	calls := []chat.ToolCall{{ID: "toolu_01", Name: "read_file"}, {ID: "toolu_02", Name: "edit_file"}}
	out := chat.ToolOutcome{Content: "x"}
	conv := chat.NewConversation("T").Grow(1 << 22).Append(chat.UserMessage("hi"))
	b.Run("ops", func(b *testing.B) {
		for b.Loop() {
			r := conv.StartRound(calls)
			if !a.IsUnknownCall(r, "toolu_01") && a.ToolsPending(r) {
				r = a.RecordOutcome(r, "toolu_01", out)
			}
			_ = r
		}
	})
	b.Run("start", func(b *testing.B) {
		for b.Loop() {
			_ = conv.StartRound(calls)
		}
	})
	b.Run("pending", func(b *testing.B) {
		r := conv.StartRound(calls)
		for b.Loop() {
			_ = r.Pending("toolu_01")
		}
	})
}
