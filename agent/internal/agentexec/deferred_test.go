package agentexec_test

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// Input typed during a turn is deferred by the machine (spec/agent.yaml,
// Running's defer list), saved with its state and taken once it waits for
// input again.

// countNotices returns a Notice hook that closes done once n notices
// containing sub have been shown.
func countNotices(sub string, n int, done func()) func(string) {
	var mu sync.Mutex
	seen := 0
	return func(msg string) {
		if !strings.Contains(msg, sub) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if seen++; seen == n {
			done()
		}
	}
}

// TestQueuedInput types three messages at once: the first starts a turn,
// the machine holds the other two (deferred, not refused) and takes them
// in order, each once the turn before has ended.
func TestQueuedInput(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			queued := make(chan struct{})
			s := newSession(t, p, nil,
				fakellm.Reply{Text: "Answer one.", Wait: queued},
				fakellm.Reply{Text: "Answer two."},
				fakellm.Reply{Text: "Answer three."},
			)
			in, out := io.Pipe()
			d := &recorder{onNotice: countNotices("busy: your message is queued and will be sent when this turn ends", 2, func() { close(queued) })}
			go func() {
				_, _ = io.WriteString(out, "first\nsecond\nthird\n")
				_ = out.Close()
			}()
			res, err := s.run(t, run{input: in, display: d})
			require.NoError(t, err)
			assert.Equal(t, 3, res.Turns)
			assert.True(t, res.Idle)
			assert.Equal(t, []string{"user: first", "assistant: Answer one.", "user: second", "assistant: Answer two.", "user: third", "assistant: Answer three."}, s.conversation(t))
			assert.Equal(t, 3, d.turns)
			assert.NotContains(t, string(s.thread(t).State), `"deferred"`, "the machine holds nothing once it waits")

			var inputs, held int
			for _, r := range s.records(t) {
				assert.False(t, r.Rejected, "nothing is refused: %s", r.Event)
				if strings.Contains(string(r.Event), `"user_input"`) {
					inputs++
					if len(r.Actions) == 0 {
						held++ // deferred: no action
					}
				}
			}
			assert.Equal(t, 3, inputs, "each message is handed to the machine once")
			assert.Equal(t, 2, held)
			s.checkReplay(t)
		})
	}
}

// TestDeferredInputResumes stops the agent (a signal) while its machine
// holds a message typed during the turn: the thread's saved state holds
// it. Resumed to go on (a script, -p), the turn completes and the message
// is sent after it; resumed interactively, the turn is stopped and the
// message shown, not sent.
func TestDeferredInputResumes(t *testing.T) {
	sig := syscall.SIGUSR1
	for _, continueTurn := range []bool{true, false} {
		name := map[bool]string{true: "continued", false: "interactive"}[continueTurn]
		t.Run(name, func(t *testing.T) {
			s := newSession(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Thinking hard about", Stall: true})
			in, out := io.Pipe()
			var once sync.Once
			d := &recorder{
				onText:   func() { once.Do(func() { go func() { _, _ = io.WriteString(out, "later\n") }() }) },
				onNotice: countNotices("queued", 1, func() { signalSelf(t, sig) }),
			}
			res, err := s.run(t, run{prompt: "Go.", input: in, display: d, signals: []os.Signal{sig}})
			require.NoError(t, err)
			_ = out.Close()
			assert.False(t, res.Idle)
			assert.Equal(t, agent.StateCallingLLM, s.state(t).Kind())
			var saved struct {
				Deferred []json.RawMessage `json:"deferred"`
			}
			require.NoError(t, json.Unmarshal(s.thread(t).State, &saved))
			require.Len(t, saved.Deferred, 1, "the machine's state holds the message: %s", s.thread(t).State)
			assert.Contains(t, string(saved.Deferred[0]), `"content":"later"`)

			d = &recorder{}
			if continueTurn {
				s.srv.Add(fakellm.Reply{Text: "Fresh answer."}, fakellm.Reply{Text: "Later answer."})
			}
			res, err = s.run(t, run{display: d, continueTurn: continueTurn})
			require.NoError(t, err)
			assert.True(t, res.Idle)
			assert.NotContains(t, string(s.thread(t).State), `"deferred"`)
			if continueTurn {
				assert.Equal(t, 2, res.Turns)
				assert.Equal(t, []string{"user: Go.", "assistant: Fresh answer.", "user: later", "assistant: Later answer."}, s.conversation(t))
				assert.Len(t, s.srv.Requests(), 3)
			} else {
				assert.Contains(t, d.notices, `not sent before the session stopped: "later"; type it again to send it`)
				assert.Len(t, s.srv.Requests(), 1, "nothing is sent before the user types")
				for _, m := range s.conversation(t) {
					assert.NotContains(t, m, "later")
				}
			}
			rep := s.checkReplay(t)
			assert.Equal(t, 2, rep.Sessions)
		})
	}
}

// TestInterruptWithDeferredInput stops a turn (Ctrl-C) while the machine
// holds a message typed during it: the turn ends stopped, and the message
// starts the next turn, as the user typed it to be sent after this one.
func TestInterruptWithDeferredInput(t *testing.T) {
	sig := syscall.SIGUSR2
	s := newSession(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Thinking hard about", Stall: true}, fakellm.Reply{Text: "Later answer."})
	in, out := io.Pipe()
	var once sync.Once
	d := &recorder{
		onText:   func() { once.Do(func() { go func() { _, _ = io.WriteString(out, "later\n") }() }) },
		onNotice: countNotices("queued", 1, func() { signalSelf(t, sig) }),
	}
	d.onTurnEnd = func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.turns == 2 {
			go func() { _ = out.Close() }()
		}
	}
	res, err := s.run(t, run{prompt: "Go.", input: in, display: d, interrupts: []os.Signal{sig}})
	require.NoError(t, err)
	assert.True(t, res.Idle)
	assert.Equal(t, 2, res.Turns)
	assert.Empty(t, res.LastError, "the last turn ended with the reply")
	conv := s.conversation(t)
	require.GreaterOrEqual(t, len(conv), 3)
	assert.Equal(t, "user: Go.", conv[0])
	assert.Equal(t, []string{"user: later", "assistant: Later answer."}, conv[len(conv)-2:])
	assert.Len(t, s.srv.Requests(), 2)
	s.checkReplay(t)
}

// TestQueuedInputOfEarlierRelease: a thread saved by a release that
// queued typed input in the thread (queued_input) is refused, saying
// what to do.
func TestQueuedInputOfEarlierRelease(t *testing.T) {
	t.Parallel()
	b, err := behavior.New(behavior.DefaultConfig())
	require.NoError(t, err)
	provider, err := llm.New("anthropic", llm.Config{APIKey: testKey, BaseURL: "http://127.0.0.1:1"})
	require.NoError(t, err)
	ws, err := tools.NewWorkspace(t.TempDir())
	require.NoError(t, err)
	th := &threadwire.Thread{Version: threadwire.Version, ID: "T-old", Created: time.Now(), QueuedInput: []string{"typed ahead"}}
	_, err = agentexec.New(agentexec.Config{Behavior: b, Provider: provider, Tools: tools.Default(ws, tools.Options{}), Thread: th})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `thread T-old: it holds 1 message(s) typed during a turn and queued by an earlier release of the agent (queued_input, the first "typed ahead")`)
	assert.Contains(t, err.Error(), "resume it with the release that saved it")
}
