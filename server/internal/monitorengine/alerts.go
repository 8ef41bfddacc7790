package monitorengine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/fsmgen/fsmgen/internal/backoff"
)

// Alerts are delivered at least once: each is stored with the change that
// raised it, posted until the webhook answers 2xx, and retried with a
// backoff (alertBackoff doubling, up to alertBackoffCap: 30 s to 6 h) for
// up to alertAttempts attempts.
const (
	alertAttempts   = 12
	alertTimeout    = 10 * time.Second
	alertBackoff    = 30 * time.Second
	alertBackoffCap = 6 * time.Hour
)

// sendAlerts delivers the stored alerts until ctx is done.
func (e *Engine) sendAlerts(ctx context.Context) {
	wait := time.NewTimer(0)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.alerts:
		case <-wait.C:
		}
		e.deliverDue(ctx)
		next, err := e.store.NextAlertAt(ctx)
		d := time.Minute
		if err == nil && !next.IsZero() {
			d = max(next.Sub(e.now()), time.Second)
		}
		wait.Reset(d)
	}
}

// deliverDue posts every alert that is due.
func (e *Engine) deliverDue(ctx context.Context) {
	for ctx.Err() == nil {
		alerts, err := e.store.PendingAlerts(ctx, e.now(), 50)
		if err != nil {
			if ctx.Err() == nil { // not the engine stopping
				e.log.Error("read the alerts", "err", err)
			}
			return
		}
		if len(alerts) == 0 {
			return
		}
		for _, a := range alerts {
			err := e.post(ctx, a.URL, a.Payload)
			now := e.now()
			if err == nil {
				if err := e.store.AlertDelivered(ctx, a.ID, now); err != nil {
					e.log.Error("record an alert's delivery", "err", err)
					return
				}
				continue
			}
			var next time.Time
			if a.Attempts+1 < alertAttempts {
				next = now.Add(backoff.Exponential(alertBackoff, alertBackoffCap, a.Attempts+1))
			}
			e.log.Warn("an alert webhook failed", "url", a.URL, "attempt", a.Attempts+1, "err", err)
			if err := e.store.AlertFailed(ctx, a.ID, now, next, err.Error()); err != nil {
				e.log.Error("record an alert's failure", "err", err)
				return
			}
		}
	}
}

// NudgeAlerts has the alerts stored by others than the engine (the
// background jobs' engine) delivered now rather than at the next poll.
func (e *Engine) NudgeAlerts() {
	select {
	case e.alerts <- struct{}{}:
	default:
	}
}

// post posts payload to url as JSON, through the guard of the webhooks; an
// answer other than 2xx is an error.
func (e *Engine) post(ctx context.Context, url string, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "fsmgen-server")
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook answered %s", resp.Status)
	}
	return nil
}
