package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
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
		Notify: func(msg string) { fmt.Fprintf(diag, "agent: %s\n", sanitize(msg)) }})
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
		fmt.Fprintf(stderr, "agent: sync: %s\n", sanitize(err.Error()))
		return
	}
	if p.Pushed() > 0 {
		fmt.Fprintf(stderr, "agent: thread %s synced to %s\n", id, p.URL())
	}
}
