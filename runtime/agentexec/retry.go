package agentexec

import (
	"context"
	"time"

	"github.com/fsmgen/fsmgen/gen/agent"
)

// startTimer sends RetryTimeoutFired after d, unless the loop stops first.
// It cancels the timer still running, if any; a timer cancelled after it
// fired has its event dropped.
func (a *Agent) startTimer(d time.Duration) {
	tctx, valid := a.timer.restart(a.ctx)
	l := a.loop
	a.later(func() {
		l.Go(tctx, "retry timer", func(ctx context.Context) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				_ = l.SendIf(ctx, &agent.RetryTimeoutFired{}, valid)
			case <-ctx.Done():
			}
		})
	})
}
