package bench_test

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/bench/cpuclock"
)

// rewindEvery returns how many turns a machine runs on a conversation
// that started with n messages before the benchmark starts it again on a
// fresh copy of those n messages (with the timer stopped): 2,000 turns, or
// n/5 for long conversations. A turn appends five messages, so the
// conversation holds between n and n+10,000 messages, or between n and 2n,
// while it is timed; without rewinding, a conversation that starts small
// would soon be as large as one that starts large. Rewinding copies the n
// messages and collects garbage, so that no collection runs in the timed
// turns; for long conversations that takes longer than 2,000 turns, hence
// the longer runs.
func rewindEvery(n int) int { return max(2000, n/5) }

// history returns n messages of a plausible conversation: user requests,
// assistant replies with tool calls, and tool results.
func history(n int) []chat.Message {
	msgs := make([]chat.Message, n)
	body := strings.Repeat("func f() { return }\n", 20)
	for i := range msgs {
		id := "toolu_h" + strconv.Itoa(i/4)
		switch i % 4 {
		case 0:
			msgs[i] = chat.UserMessage("Please look at the next function.")
		case 1:
			msgs[i] = chat.Message{Role: chat.RoleAssistant, Content: "Reading it.", ToolCalls: []chat.ToolCall{call(id, "read_file")}}
		case 2:
			msgs[i] = chat.Message{Role: chat.RoleTool, Content: body, ToolCallID: id, ToolName: "read_file"}
		case 3:
			msgs[i] = chat.Message{Role: chat.RoleAssistant, Content: "It returns early."}
		}
	}
	return msgs
}

// BenchmarkTurn times the standard turn (eleven events, see standardTurn)
// on each contender, on conversations that start with 10, 1,000 and
// 100,000 messages. One op is one turn; ns/event, allocs/event and
// B/event divide by its eleven events. Contenders are sub-benchmarks of
// one run, so that their ratios hold on a noisy machine.
func BenchmarkTurn(b *testing.B) {
	for _, n := range []int{10, 1000, 100_000} {
		base := history(n)
		for _, c := range contenders {
			b.Run(fmt.Sprintf("conv=%d/impl=%s", n, c.name), func(b *testing.B) {
				benchTurns(b, c, base)
			})
		}
	}
}

// benchTurns runs b.N standard turns on one contender, rewinding to a
// fresh copy of base every rewindEvery(len(base)) turns with the timer
// stopped.
//
// Besides the wall clock's ns/event it reports cpu-ns/event, the
// processor time of the process in the timed turns (see package
// cpuclock): on a shared machine the wall clock also counts the time the
// benchmark waits for a CPU. The machines allocate nothing in the timed
// turns, so no collection runs there, and at GOMAXPROCS=1 the benchmark's
// goroutine is the only one at work: the processor time is the turns'.
func benchTurns(b *testing.B, c contender, base []chat.Message) {
	b.StopTimer()
	every := rewindEvery(len(base))
	evs := standardTurn()
	fresh := func() runner {
		// Storage of its own with room for every message the turns until
		// the next rewind append: the timed turns then measure the
		// machines, not the growth of the conversation's storage, which
		// is the same for all of them (chat's BenchmarkAppend measures it).
		conv := chat.NewConversation("T-bench").Grow(len(base) + 5*every).Append(base...)
		r := c.make(benchConfig, conv, evs)
		runtime.GC()
		return r
	}
	var (
		ms             runtime.MemStats
		mallocs, bytes uint64
		m0, b0         uint64
		cpu            cpuclock.Timer
	)
	start := func() {
		runtime.ReadMemStats(&ms)
		m0, b0 = ms.Mallocs, ms.TotalAlloc
		cpu.Start()
		b.StartTimer()
	}
	stop := func() {
		b.StopTimer()
		cpu.Stop()
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - m0
		bytes += ms.TotalAlloc - b0
	}
	r := fresh()
	b.ResetTimer()
	start()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%every == 0 {
			stop()
			r = fresh()
			start()
		}
		if err := r.turn(); err != nil {
			b.Fatalf("turn %d: %v", i, err)
		}
	}
	stop()
	events := float64(b.N) * turnEvents
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64(mallocs)/events, "allocs/event")
	b.ReportMetric(float64(bytes)/events, "B/event")
	if t, ok := cpu.Total(); ok {
		b.ReportMetric(float64(t.Nanoseconds())/events, "cpu-ns/event")
	}
}
