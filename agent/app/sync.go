package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/agent/internal/termtext"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// syncStopTime is how long the agent tries, when it stops, to push the
// thread's last version to the -sync server.
const syncStopTime = 3 * time.Second

// checkSync reports what is wrong with -sync: its URL (plain http:// to
// another machine without -sync-allow-http), or no token.
func checkSync(url string, allowHTTP bool) error {
	if _, err := threadsync.New(threadsync.Config{URL: url, AllowHTTP: allowHTTP}); err != nil {
		return fmt.Errorf("-sync: %w", err)
	}
	if os.Getenv(threadsync.TokenVar) == "" {
		return fmt.Errorf("-sync %s: set %s to the server's API token (the server prints it on its first start)", url, threadsync.TokenVar)
	}
	return nil
}

// startSync starts the pusher of the thread to the -sync server, telling
// the user through diag; nil when -sync was not given.
func startSync(ctx context.Context, url string, allowHTTP bool, token string, secrets []string, diag io.Writer) (*threadsync.Pusher, error) {
	if url == "" {
		return nil, nil
	}
	p, err := threadsync.New(threadsync.Config{URL: url, AllowHTTP: allowHTTP, Token: token, Secrets: append(secrets, token),
		Notify: func(msg string) { fmt.Fprintf(diag, "agent: %s\n", termtext.Sanitize(msg)) }})
	if err != nil {
		return nil, fmt.Errorf("-sync: %w", err)
	}
	p.Start(ctx)
	return p, nil
}

// stopSync pushes what is left for at most syncStopTime and says how it
// went.
func stopSync(ctx context.Context, p *threadsync.Pusher, id string, stderr io.Writer) {
	if p == nil {
		return
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncStopTime)
	defer cancel()
	if err := p.Stop(stop); err != nil {
		fmt.Fprintf(stderr, "agent: sync: %s\n", termtext.Sanitize(err.Error()))
		return
	}
	if p.Pushed() > 0 {
		fmt.Fprintf(stderr, "agent: thread %s synced to %s\n", id, p.URL())
	}
}

// subagentSync pushes the threads of a session's subagents to its -sync
// server: each with a pusher of its own (a pusher pushes one thread),
// started when the subagent starts and stopped when the session ends.
type subagentSync struct {
	mu      sync.Mutex
	pushers []*threadsync.Pusher
	stopped bool
}

// syncSubagent returns the hook that pushes the saves of subagent thread
// id to the session's -sync server (see subagent.Config.Sync); nil when
// the session's thread is not synced, or is no longer.
func (s *agentSession) syncSubagent(ctx context.Context, id string) func(*threadwire.Thread) {
	ss := &s.subSync
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s.o.sync == "" || ss.stopped {
		return nil
	}
	p, err := startSync(ctx, s.o.sync, s.o.syncAllowHTTP, s.syncToken, s.subagentSecrets(), s.display.diag)
	if err != nil { // checked at start: not expected
		s.logger.Warn("a subagent's thread is not synced", "thread", id, "error", err)
		return nil
	}
	ss.pushers = append(ss.pushers, p)
	return p.Saved
}

// stopSubagentSync pushes what is left of the subagents' threads, for at
// most syncStopTime all together, and says what could not be pushed, and
// how many were.
func (s *agentSession) stopSubagentSync(ctx context.Context) {
	ss := &s.subSync
	ss.mu.Lock()
	list := ss.pushers
	ss.pushers, ss.stopped = nil, true
	ss.mu.Unlock()
	if len(list) == 0 {
		return
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), syncStopTime)
	defer cancel()
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, p := range list {
		wg.Go(func() { errs[i] = p.Stop(stop) })
	}
	wg.Wait()
	synced := 0
	for i, err := range errs {
		if err != nil {
			fmt.Fprintf(s.stderr, "agent: sync: subagent %s\n", termtext.Sanitize(err.Error()))
		} else if list[i].Pushed() > 0 {
			synced++
		}
	}
	if synced > 0 {
		fmt.Fprintf(s.stderr, "agent: %d subagent thread(s) synced to %s\n", synced, list[0].URL())
	}
}
