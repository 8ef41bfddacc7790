package main

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/proctest"
)

// TestMain runs orderd itself when the test starts this binary as orderd.
func TestMain(m *testing.M) {
	if os.Getenv("ORDERD_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// proc is an orderd process of a test.
type proc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *proctest.Buffer
}

// start starts orderd on the state file with a payment window.
func start(t *testing.T, state string, window time.Duration) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-state", state, "-payment-window", window.String())
	cmd.Env = append(os.Environ(), "ORDERD_TEST_MAIN=1")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out := &proctest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	p := &proc{cmd: cmd, in: in, out: out}
	t.Cleanup(func() { p.kill() })
	return p
}

// send writes events to the process.
func (p *proc) send(t *testing.T, events ...string) {
	t.Helper()
	for _, ev := range events {
		_, err := io.WriteString(p.in, ev+"\n")
		require.NoError(t, err)
	}
}

// kill kills the process with SIGKILL and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}

// saved is the state file as a test reads it.
type saved struct {
	Machine struct {
		State struct {
			Kind string `json:"kind"`
		} `json:"state"`
		Timers []struct {
			ID       int       `json:"id"`
			Deadline time.Time `json:"deadline"`
		} `json:"timers"`
	} `json:"machine"`
	Journal []struct {
		At    time.Time       `json:"at"`
		Event json.RawMessage `json:"event"`
		State string          `json:"state"`
	} `json:"journal"`
}

// readState reads the state file; ok is false before the first save.
func readState(t *testing.T, path string) (saved, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return saved{}, false
	}
	require.NoError(t, err)
	var s saved
	require.NoError(t, json.Unmarshal(data, &s), "%s", data)
	return s, true
}

// waitFor waits until the state file satisfies ok, and returns it.
func waitFor(t *testing.T, path string, ok func(saved) bool) saved {
	t.Helper()
	var s saved
	require.Eventually(t, func() bool {
		var found bool
		s, found = readState(t, path)
		return found && ok(s)
	}, 20*time.Second, 5*time.Millisecond)
	return s
}

// fired counts the journal's timer_fired entries.
func fired(s saved) (n int, at time.Time) {
	for _, e := range s.Journal {
		if strings.Contains(string(e.Event), `"kind":"timer_fired"`) {
			n++
			at = e.At
		}
	}
	return n, at
}

// placeOrder starts a process on a new state file, places an order, and
// returns the process and the payment deadline the machine saved.
func placeOrder(t *testing.T, state string, window time.Duration) (*proc, time.Time) {
	t.Helper()
	p := start(t, state, window)
	p.send(t, `{"kind":"add_item","price":1250}`, `{"kind":"begin_checkout"}`, `{"kind":"place_order"}`)
	s := waitFor(t, state, func(s saved) bool { return s.Machine.State.Kind == "awaiting_payment" })
	require.Len(t, s.Machine.Timers, 1)
	deadline := s.Machine.Timers[0].Deadline
	placed := s.Journal[len(s.Journal)-1].At
	assert.True(t, deadline.Equal(placed.Add(window)), "the deadline is when the order was placed plus the window: %s, %s", deadline, placed)
	return p, deadline
}

// TestDeadlineAcrossKills kills orderd with SIGKILL at random moments while
// an order waits for its payment, and restarts it, until the order has
// expired. The saved deadline never moves; the deadline's firing is
// handled once, at or after the deadline; the expiry notice is performed.
func TestDeadlineAcrossKills(t *testing.T) {
	const window = 2 * time.Second
	for run := range 3 {
		t.Run("run", func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(run), 7))
			state := filepath.Join(t.TempDir(), "order.json")
			p, deadline := placeOrder(t, state, window)
			var out strings.Builder
			kills := 0
			for {
				// A moment somewhere in the window, or past the deadline.
				time.Sleep(time.Duration(r.Int64N(int64(window / 2))))
				p.kill()
				kills++
				out.WriteString(p.out.String())
				s, _ := readState(t, state)
				if s.Machine.State.Kind == "awaiting_payment" {
					require.Len(t, s.Machine.Timers, 1)
					require.True(t, s.Machine.Timers[0].Deadline.Equal(deadline), "after %d kills the deadline moved: %s, was %s", kills, s.Machine.Timers[0].Deadline, deadline)
				}
				if n, _ := fired(s); n > 0 {
					break
				}
				p = start(t, state, window)
			}
			// Let a last process finish what the kill cut short.
			p = start(t, state, window)
			require.NoError(t, p.cmd.Wait(), "orderd exits once the order has ended: %s", p.out.String())
			out.WriteString(p.out.String())
			s, _ := readState(t, state)
			assert.Equal(t, "expired", s.Machine.State.Kind)
			n, at := fired(s)
			assert.Equal(t, 1, n, "the deadline's firing is handled once (%d kills)", kills)
			assert.False(t, at.Before(deadline), "the deadline fired at %s, before %s", at, deadline)
			assert.Contains(t, out.String(), `{"kind":"send_expiry_notice"}`, "the expiry notice is performed")
		})
	}
}

// TestOverdueDeadlineFiresAtRestart places an order with an hour to pay,
// kills orderd, and moves the saved deadline into the past, as if the
// process had been down for the hour: the restarted process fires the
// deadline at once (an hour counted again from the restart would never
// fire in this test), and the order expires.
func TestOverdueDeadlineFiresAtRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "order.json")
	p, _ := placeOrder(t, state, time.Hour)
	p.kill()
	data, err := os.ReadFile(state)
	require.NoError(t, err)
	var f file
	require.NoError(t, json.Unmarshal(data, &f))
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(f.Machine, &m))
	var timers []map[string]any
	require.NoError(t, json.Unmarshal(m["timers"], &timers))
	require.Len(t, timers, 1)
	past := time.Now().UTC().Add(-time.Second)
	timers[0]["deadline"] = past
	m["timers"], err = json.Marshal(timers)
	require.NoError(t, err)
	f.Machine, err = json.Marshal(m)
	require.NoError(t, err)
	data, err = json.Marshal(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(state, data, 0o600))

	restarted := time.Now()
	p = start(t, state, time.Hour)
	s := waitFor(t, state, func(s saved) bool { return s.Machine.State.Kind == "expired" })
	require.NoError(t, p.cmd.Wait())
	n, at := fired(s)
	assert.Equal(t, 1, n)
	assert.False(t, at.Before(restarted), "fired by the restarted process")
	assert.Contains(t, p.out.String(), `{"kind":"send_expiry_notice"}`)
}

// TestPaidOrderDoesNotExpire pays the order, kills orderd and restarts it
// past the deadline: the cancelled timer does not fire.
func TestPaidOrderDoesNotExpire(t *testing.T) {
	const window = 500 * time.Millisecond
	state := filepath.Join(t.TempDir(), "order.json")
	p, deadline := placeOrder(t, state, window)
	p.send(t, `{"kind":"payment_received"}`)
	s := waitFor(t, state, func(s saved) bool { return s.Machine.State.Kind == "picking" })
	assert.Empty(t, s.Machine.Timers, "the payment cancelled the deadline")
	p.kill()
	for time.Now().Before(deadline) {
		time.Sleep(deadline.Sub(time.Now()))
	}
	p = start(t, state, window)
	p.send(t, `{"kind":"cancel"}`)
	require.NoError(t, p.cmd.Wait())
	s, _ = readState(t, state)
	n, _ := fired(s)
	assert.Zero(t, n)
	assert.Equal(t, "cancelled", s.Machine.State.Kind)
	assert.Contains(t, p.out.String(), `{"kind":"refund","total":1250}`)
}
