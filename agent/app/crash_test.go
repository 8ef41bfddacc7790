package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// crashRounds is how many rounds of tools the model of TestKillNeverRunsTwice
// asks for before it answers.
const crashRounds = 3

// crashModel answers like a model that runs crashRounds rounds of two
// non-idempotent commands, each appending a line naming its call to
// runs.log, then says it is done. It decides from the conversation alone,
// so a request sent again on resume gets the same answer.
func crashModel(req fakellm.Request) fakellm.Reply {
	rounds := 0
	for _, m := range req.Messages {
		if len(m.ToolCalls) > 0 {
			rounds++
		}
	}
	if rounds >= crashRounds {
		return fakellm.Reply{Text: "Done."}
	}
	r := rounds + 1
	// Each command prints 40,000 bytes, so that the thread grows and its
	// saves take long enough to be killed in the middle now and then.
	call := func(id, extra string) fakellm.ToolCall {
		return fakellm.ToolCall{ID: id, Name: "bash", Args: fmt.Sprintf(`{"command":"echo %s >> runs.log; printf %%040000d 0%s"}`, id, extra)}
	}
	return fakellm.Reply{
		Text:      fmt.Sprintf("Round %d.", r),
		ToolCalls: []fakellm.ToolCall{call(fmt.Sprintf("r%da", r), ""), call(fmt.Sprintf("r%db", r), "; sleep 0.02")},
	}
}

// TestKillNeverRunsTwice kills the agent with SIGKILL at random moments of
// a turn of non-idempotent tool rounds — while it waits for the model,
// while tools run, while it saves the thread, while it commits — and
// resumes it, killing it again at random, until the turn ends. No command
// may ever run twice, and every call ends with its own result or an
// "interrupted" one.
func TestKillNeverRunsTwice(t *testing.T) {
	t.Parallel()
	const trials = 16
	rng := rand.New(rand.NewPCG(1, 2))
	midSave := 0
	for trial := range trials {
		t.Run(fmt.Sprint(trial), func(t *testing.T) { midSave += crashTrial(t, rng, false) })
	}
	// Kills right after an append to the journal depend on timing: when
	// none landed (a loaded machine), aim only at saves until one does.
	for extra := 0; midSave == 0 && extra < 40; extra++ {
		t.Run(fmt.Sprint("at a save ", extra), func(t *testing.T) { midSave += crashTrial(t, rng, true) })
	}
	t.Logf("%d kills landed right after an append to the thread's journal", midSave)
	assert.Positive(t, midSave, "no kill landed right after an append")
}

// crashTrial runs one turn of crashModel's, killing the agent at random
// moments (only in the middle of saves when atSave) and resuming it until
// the turn ends, then checks that no command ran twice. It returns how
// many kills landed right after an append to the journal.
func crashTrial(t *testing.T, rng *rand.Rand, atSave bool) (midSave int) {
	e := newEnv(t, fakellm.Anthropic, map[string]string{"README": "crash test\n"})
	e.srv.Respond(crashModel)
	id := ""
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 20, "the turn never ended")
		args := []string{"-p", "Go."}
		if id != "" {
			// One-shot, a resumed turn goes on by itself (interactive,
			// it would wait for the user: see TestResumeWaitsForTheUser).
			args = []string{"-resume", id, "-p", "Go on."}
		}
		// Kill three runs in four, half of them after up to 300 ms (a
		// whole turn takes about that long), half right after one of
		// their first appends to the thread's journal; let the rest
		// finish.
		if attempt < 8 && rng.IntN(4) != 0 {
			if !atSave && rng.IntN(2) == 0 {
				killAfter(t, e, time.Duration(rng.IntN(300))*time.Millisecond, args...)
			} else if killAtSave(t, e, rng.IntN(8), args...) {
				midSave++
			}
			if ids := e.threadIDs(t); len(ids) == 1 {
				id = ids[0]
			}
			continue
		}
		if id == "" {
			// Killed before the thread was first saved: nothing ran.
			assert.NoFileExists(t, filepath.Join(e.ws, "runs.log"))
			args = []string{"-p", "Go."}
		}
		r := e.run(t, "", args...)
		require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
		break
	}
	id = e.onlyThread(t)

	var runs []string
	if b, err := os.ReadFile(filepath.Join(e.ws, "runs.log")); err == nil {
		runs = strings.Fields(string(b))
	}
	counts := map[string]int{}
	for _, r := range runs {
		counts[r]++
		assert.Equal(t, 1, counts[r], "command %s ran twice: runs.log is %q", r, runs)
	}
	// Every call has exactly one result: its own or "interrupted".
	conv := messages(e.state(t, id))
	results := 0
	for _, m := range conv {
		if strings.HasPrefix(m, "tool: ") {
			results++
			ok := strings.HasPrefix(m, "tool: 0000") || strings.HasPrefix(m, "tool: "+agentexec.InterruptedPrefix)
			assert.True(t, ok, "unexpected tool result %.80q", m)
		}
	}
	assert.Equal(t, 2*crashRounds, results, "conversation: %.500q", conv)
	assert.Equal(t, "assistant: Done.", conv[len(conv)-1])
	assert.LessOrEqual(t, len(runs), 2*crashRounds)
	assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code, "the event log replays")
	assert.NotContains(t, gittest.Git(t, e.ws, "ls-files"), "tmp", "no temporary file was committed")
	e.checkNoSecret(t)
	return midSave
}

// killWhen runs the agent with args and kills it with SIGKILL as soon as
// now, polled every 20 µs, says so (or lets it end, if it ends first).
func killWhen(t *testing.T, e *env, now func() bool, args ...string) {
	t.Helper()
	killWhenStdin(t, e, "", now, args...)
}

// killAfter runs the agent with args and kills it with SIGKILL after d (or
// lets it end, if it ends first).
func killAfter(t *testing.T, e *env, d time.Duration, args ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	killWhen(t, e, func() bool { return time.Now().After(deadline) }, args...)
}

// killAtSave runs the agent with args and kills it with SIGKILL as soon as
// its (skip+1)th save has appended to the thread's journal (polled every
// 20 µs: the kill lands while the record is synced, or while what it
// records starts), or lets it end, if it ends first. It reports whether
// the kill followed an append.
func killAtSave(t *testing.T, e *env, skip int, args ...string) (atAppend bool) {
	t.Helper()
	appends, last := 0, int64(-1)
	killWhen(t, e, func() bool {
		journals, _ := filepath.Glob(filepath.Join(e.threads, "*.journal"))
		if len(journals) != 1 {
			return false
		}
		fi, err := os.Stat(journals[0])
		if err != nil {
			return false
		}
		if fi.Size() != last {
			appends, last = appends+1, fi.Size()
		}
		atAppend = appends > skip
		return atAppend
	}, args...)
	return atAppend
}

// TestKillKeepsTypedInput kills the agent with SIGKILL as soon as the
// event log records the first message typed — before the thread that
// records what the machine did with it can be saved — and resumes the
// thread one-shot: the message is sent all the same (issue 20 item 8). The
// window is short, so the kill is repeated. (Resumed interactively, such a
// message is shown, not sent: see TestResumeWaitsForTheUser.)
func TestKillKeepsTypedInput(t *testing.T) {
	t.Parallel()
	for trial := range 8 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil)
			e.srv.Respond(func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "Hi."} })
			killWhenStdin(t, e, "Hello.\n", func() bool {
				logs, _ := filepath.Glob(filepath.Join(e.threads, "*.events.jsonl"))
				if len(logs) != 1 {
					return false
				}
				b, _ := os.ReadFile(logs[0])
				return strings.Contains(string(b), `"kind":"user_input"`)
			})
			id := e.onlyThread(t)
			r := e.run(t, "", "-resume", id, "-p", "Again.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Equal(t, []string{"user: Hello.", "assistant: Hi.", "user: Again.", "assistant: Hi."}, messages(e.state(t, id)), "the message typed before the kill was sent")
			assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code, "the event log replays")
		})
	}
}

// killWhenStdin is killWhen with stdin as the agent's input ("" for
// none).
func killWhenStdin(t *testing.T, e *env, stdin string, now func() bool, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cmd.Wait()
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		if now() {
			_ = cmd.Process.Kill()
			<-done
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
}
