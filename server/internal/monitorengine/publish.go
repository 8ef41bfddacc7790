package monitorengine

import (
	"context"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// publishQueue bounds the written rounds whose events wait for the
// publisher; past it, Run waits for the publisher.
const publishQueue = 256

// publishRounds publishes the events of each written round, in order,
// until Run closes rounds: Run may write rounds after its context ends (a
// backlog of timers is worked through to its end), and waits for the
// publisher when publishQueue rounds wait already. It runs beside Run, so
// that reading the finished check-ins back (publish) does not hold up the
// next round.
func (e *Engine) publishRounds(ctx context.Context, rounds <-chan []Event) {
	for events := range rounds {
		e.publish(ctx, events)
	}
}

// publish hands a written round's events to the hub. The check-ins the
// round finished are read back from the store, all in one read, when
// someone listens; should the read fail, their events say what the round
// knows of them.
func (e *Engine) publish(ctx context.Context, events []Event) {
	var ids []string
	for _, ev := range events {
		if f, ok := ev.Data.(finishedCheckin); ok {
			ids = append(ids, f.id)
		}
	}
	if len(ids) > 0 && e.hub.Subscribers() == 0 {
		ids = nil // nobody reads them
	}
	stored := map[string]*store.Checkin{}
	if len(ids) > 0 {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), roundWriteTimeout)
		list, err := e.store.CheckinsByID(rctx, ids)
		cancel()
		if err != nil {
			e.log.Warn("read the finished check-ins for the event stream", "err", err)
		}
		for _, c := range list {
			stored[c.ID] = c
		}
	}
	for _, ev := range events {
		if f, ok := ev.Data.(finishedCheckin); ok {
			if ids == nil {
				continue
			}
			view := CheckinView{ID: f.id, Status: f.status, FinishedAt: &f.at}
			if c := stored[f.id]; c != nil && c.MonitorID == f.monitorID {
				view = newCheckinView(c)
			}
			ev = Event{Kind: EventCheckin, Data: CheckinEvent{Slug: f.slug, Checkin: view}}
		}
		e.hub.Publish(ev)
	}
}
