package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Process is a started command.
type Process struct {
	cmd          *exec.Cmd
	confined     bool
	limits       Limits
	tmpUnlimited bool
	cgroup       *commandCgroup // its pids cgroup; nil without
	pidsCgroup   bool           // it has a pids cgroup
	done         chan struct{}  // closed once the command was waited for
	err          error          // what cmd.Wait returned; set before done is closed
	pidsRefused  int            // tasks its pids cgroup refused; set before done is closed
	disk         *diskWatch     // the watcher of what it writes; nil without (its wrote is set before done is closed)
	killMu       sync.Mutex     // serialises Kill
}

// run starts the command and waits for it, on one locked OS thread.
// bubblewrap's --die-with-parent kills the sandbox when the thread that
// started it exits (Linux's parent-death signal follows the thread, not
// the process), and Go may end a thread; locking keeps that thread alive
// for as long as the command runs. With a pids cgroup, the thread joins
// the cgroup for the fork, so that bubblewrap starts in it (see
// cgroup.go); should it fail to leave, it stays locked, and so ends with
// this goroutine rather than serve other goroutines from the command's
// cgroup.
func (p *Process) run(started chan<- error) {
	runtime.LockOSThread()
	unlock := true
	defer func() {
		if unlock {
			runtime.UnlockOSThread()
		}
	}()
	cg := p.cgroup
	if cg != nil {
		if err := cg.enter(); err != nil {
			cg.remove()
			started <- fmt.Errorf("put the command in its pids cgroup: %w", err)
			return
		}
	}
	err := p.cmd.Start()
	if cg != nil && cg.leave() != nil {
		unlock = false
	}
	if err != nil {
		if cg != nil && unlock {
			cg.remove()
		}
		started <- err
		return
	}
	started <- nil
	stopWatch := p.watchDisk()
	p.err = p.cmd.Wait()
	stopWatch()
	if cg == nil {
		close(p.done)
		return
	}
	p.pidsRefused = cg.refused()
	close(p.done)
	// The cgroup empties a millisecond or so after the command's last
	// process is reaped: its removal need not hold up the command's end.
	if unlock {
		cg.remove()
	}
}

// watchDisk starts the command's disk watcher, if it has one, in a
// goroutine of its own, which kills the command when it wrote more than
// its limit; the function returned stops it and waits for it to end.
func (p *Process) watchDisk() (stop func()) {
	if p.disk == nil {
		return func() {}
	}
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		p.disk.run(quit, p.Kill)
	}()
	return func() {
		close(quit)
		<-ended
	}
}

// Wait waits for the command to exit and returns what [exec.Cmd.Wait]
// does: nil, or an *exec.ExitError. A confined command killed by signal N
// exits with status 128+N.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Done is closed once the command has exited and was waited for.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill kills the command and every process it started. Confined, that is
// everything in its PID namespace, which dies with bubblewrap (and with
// the command itself, so Kill has nothing to do once it has exited).
// Unconfined, it is the command's process group (that of its session):
// a process that left the group (setsid, set -m) survives.
func (p *Process) Kill() {
	p.killMu.Lock()
	defer p.killMu.Unlock()
	select {
	case <-p.done:
		if p.confined {
			return // the namespace is gone, and the group id may be reused
		}
	default:
	}
	// ESRCH (nothing left to kill) is the normal case after a clean exit.
	// While the command has not been waited for, its group id cannot be
	// reused; after, the group keeps its id while any member is alive.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}
