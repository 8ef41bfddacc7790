package jobengine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/jobs"
)

// execution is a run in progress.
type execution struct {
	run store.Run
	// cancel stops the run (a timeout, a cancel, the shutdown); nil for a
	// run a killed server left.
	cancel context.CancelCauseFunc
}

// result is how a run ended.
type result struct {
	exec      *execution
	output    string
	truncated bool
	exitCode  *int
	err       error
}

// finish is the record of the run's end at now.
func (r *result) finish(now time.Time) *store.FinishRun {
	f := &store.FinishRun{ID: r.exec.run.ID, Status: jobs.RunSucceeded, FinishedAt: now, Duration: now.Sub(r.exec.run.StartedAt), Output: r.output, Truncated: r.truncated, ExitCode: r.exitCode}
	if r.err != nil {
		f.Status, f.Error = jobs.RunFailed, r.err.Error()
	}
	return f
}

// MaxOutput is how much of a run's output is kept: its last 64 KiB.
const MaxOutput = 64 << 10

// killGrace is how long a cancelled command has between SIGTERM to its
// process group and SIGKILL.
const killGrace = 2 * time.Second

// launch starts x, the run in progress of job j, which the store records
// running (on a shared store, under the jobs' lease).
func (e *Engine) launch(j *jobState, x *execution) {
	ctx, cancel := context.WithCancelCause(context.Background())
	x.cancel = cancel
	r := x.run
	def := j.def
	e.runs.Go(func() {
		defer cancel(nil)
		checkin := e.checkIn(def.ID, monitorengine.PingStart, "", nil, nil)
		res := &result{exec: x}
		if def.Func != nil {
			res.output, res.err = callFunc(ctx, def.Func)
			res.output, res.truncated = keepTail([]byte(res.output))
		} else {
			res.output, res.truncated, res.exitCode, res.err = runCommand(ctx, def.Command, r.ID)
		}
		cause := context.Cause(ctx)
		if errors.Is(cause, errLeaseLost) {
			// Another instance takes the jobs over and closes the run.
			return
		}
		if cause != nil && res.err == nil {
			res.err = cause
		}
		kind := monitorengine.PingOK
		if res.err != nil {
			kind = monitorengine.PingFail
		}
		out := res.output
		e.checkIn(def.ID, kind, checkin, res.exitCode, &out)
		select {
		case e.results <- res:
		case <-e.stopping:
		}
	})
}

// callFunc calls a Go job, turning a panic into its error.
func callFunc(ctx context.Context, f jobs.Func) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the job panicked: %v", p)
		}
	}()
	return f(ctx)
}

// runCommand runs argv in a process group of its own, with its output
// (stdout and stderr) in one pipe. When ctx ends the group gets SIGTERM,
// then SIGKILL after killGrace (at once when the jobs' lease is lost:
// another instance may run the job again soon); when the command ends,
// whatever it left in its group is killed.
//
// Should the server die (kill -9) during the run, the command goes with it:
// it gets SIGKILL as its parent-death signal. The processes it started
// would outlive it, so each carries the run's id in its environment
// (RunEnv), by which the next start finds and kills them (killLeftovers).
func runCommand(ctx context.Context, argv []string, runID string) (string, bool, *int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", false, nil, fmt.Errorf("make the output pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = append(os.Environ(), RunEnv+"="+runID)
	// Linux sends the parent-death signal when the thread that started
	// the command ends, not the process: this goroutine keeps its thread
	// until the command has been waited for.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		if errors.Is(context.Cause(ctx), errLeaseLost) {
			return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = killGrace
	if err := cmd.Start(); err != nil {
		w.Close()
		return "", false, nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	w.Close()
	out := &tail{}
	var read sync.WaitGroup
	read.Go(func() { out.readFrom(r) })
	err = cmd.Wait()
	// The group goes with its leader: a process it left behind would hold
	// the pipe open, and outlive the run.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	read.Wait()
	text, cut := out.text()
	var code *int
	if st := cmd.ProcessState; st != nil && st.Exited() {
		c := st.ExitCode()
		code = &c
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && ctx.Err() == nil {
		err = fmt.Errorf("%s: %s", argv[0], exitErr.ProcessState)
	}
	return text, cut, code, err
}

// tail keeps the last MaxOutput bytes written to it.
type tail struct {
	buf []byte
	cut bool
}

// readFrom reads r to its end.
func (t *tail) readFrom(r *os.File) {
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		t.buf = append(t.buf, chunk[:n]...)
		if len(t.buf) > 2*MaxOutput {
			t.buf = append(t.buf[:0], t.buf[len(t.buf)-MaxOutput:]...)
			t.cut = true
		}
		if err != nil {
			return
		}
	}
}

// text returns the output kept, and whether its start was cut.
func (t *tail) text() (string, bool) {
	b, cut := t.buf, t.cut
	if len(b) > MaxOutput {
		b, cut = b[len(b)-MaxOutput:], true
	}
	if cut {
		// Start at a character.
		for i := 0; i < utf8.UTFMax && i < len(b) && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), cut
}

// keepTail is what a run keeps of out: its last MaxOutput bytes.
func keepTail(out []byte) (string, bool) {
	t := &tail{buf: out}
	return t.text()
}

// monitorSlug is the slug of job id's monitor.
func monitorSlug(id string) string { return "job-" + id }

// checkIn records a check-in of job id's monitor and returns its id;
// a failure is logged: the run goes on.
func (e *Engine) checkIn(id, kind, checkin string, exitCode *int, output *string) string {
	if e.monitors == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if output != nil && len(*output) > maxCheckinOutput {
		s := (*output)[len(*output)-maxCheckinOutput:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
		output = &s
	}
	c, err := e.monitors.Check(ctx, monitorengine.Ping{Slug: monitorSlug(id), Kind: kind, Checkin: checkin, ExitCode: exitCode, Output: output, Source: monitorengine.SourceJob})
	if err != nil {
		e.log.Warn("a job's check-in failed", "job", id, "kind", kind, "err", err)
	}
	return c
}

// maxCheckinOutput is how much of a run's output its check-in keeps (the
// run keeps more).
const maxCheckinOutput = 10 << 10

// monitorGrace is how much longer than its job's timeout a run may take
// before the job's monitor times it out: the job's own timeout (its
// SIGTERM, the grace before SIGKILL, its check-in) closes the run first,
// and the monitor's is the backstop of a run the server lost.
const monitorGrace = time.Minute

// syncMonitors makes or updates each job's monitor from its settings, in
// rounds of the monitors engine (monitorengine.Engine.Ensure): nothing is
// written for the monitors that are as their jobs say.
// The monitor counts what the job counts: each attempt checks in, and it
// is failing from the job's jobs.UnhealthyAfter-th failure in a row, when
// the job becomes unhealthy (a failed attempt whose retry succeeds changes
// neither), healthy again after one good run.
func (e *Engine) syncMonitors(ctx context.Context) {
	if e.monitors == nil {
		return
	}
	ins := make([]*monitorengine.Input, 0, len(e.list))
	for _, j := range e.list {
		s := j.def.Settings
		slug := monitorSlug(j.def.ID)
		name := "Job: " + j.def.Name
		sched := monitorengine.Schedule(s.Schedule)
		tz := s.Timezone
		if tz == "" {
			tz = "UTC"
		}
		maxRuntime := min(max(int((s.Timeout+monitorGrace)/time.Second), 1), 7*86400)
		failures, recovery := jobs.UnhealthyAfter, 1
		status := monitorengine.StatusActive
		if !j.def.Enabled {
			status = monitorengine.StatusPaused
		}
		ins = append(ins, &monitorengine.Input{Slug: &slug, Name: &name, Schedule: &sched, Timezone: &tz, MaxRuntimeSeconds: &maxRuntime,
			FailureThreshold: &failures, RecoveryThreshold: &recovery, Status: &status})
	}
	// On a shared store, in the jobs' shard: this instance runs the
	// monitors, and the runs' check-ins stay in the process.
	if err := e.monitors.Ensure(ctx, ins, store.JobsShard); err != nil {
		e.log.Warn("make the jobs' monitors", "err", err)
	}
}
