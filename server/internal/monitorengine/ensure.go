package monitorengine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/fsmgen/fsmgen/gen/monitor"
	"github.com/fsmgen/fsmgen/server/internal/store"
)

// ensureChunk bounds the monitors one request of Ensure makes or changes:
// a round (one transaction) each. Each round rewrites the pages of the
// monitors' index of ping keys it inserts into, random keys spread over
// all of it, and on SQLite copies them to the file at its checkpoint: a
// first start of 100,000 jobs made 184,000 pwrite and 59,000 pread calls
// (258 MB to the log) in rounds of 2,000, 125,000 and 42,000 (172 MB) in
// rounds of 10,000. Other requests wait behind a round (some tenths of a
// second for 10,000).
const ensureChunk = 10_000

// Ensure makes each monitor of ins exist as it says: those missing are
// created (in shard, on a shared store: one this instance holds), then
// set to the status in gives; those that differ are changed; those that
// are as given are left alone, and nothing is written for them. Each in
// gives at least a slug and a schedule. The jobs engine keeps its jobs'
// monitors so, thousands at a time: the monitors go in rounds of
// ensureChunk, one transaction each, and on a shared store their slugs
// are checked and their ids drawn in one round trip each. A monitor that
// cannot be made (its slug is another shard's, its input is wrong) is
// reported, in the returned error, and the others are made all the same.
func (e *Engine) Ensure(ctx context.Context, ins []*Input, shard int) error {
	var errs []error
	var creates []*View
	var patches []*Input
	e.mu.RLock()
	for _, in := range ins {
		if in.Slug == nil || in.Schedule == nil {
			errs = append(errs, invalid("slug", "Ensure needs a slug and a schedule for each monitor"))
			continue
		}
		if m := e.bySlug[*in.Slug]; m != nil {
			cur := m.view.Load()
			if in.same(cur) {
				continue
			}
			next := *cur
			if err := in.merge(&next, e.webhooks, e.behavior); err != nil {
				errs = append(errs, fmt.Errorf("monitor %s: %w", *in.Slug, err))
			} else if next != *cur {
				patches = append(patches, in)
			}
			continue
		}
		create := *in
		create.Status = nil // a new monitor is active; its status follows
		v, err := create.fresh(e.webhooks, e.behavior)
		if err != nil {
			errs = append(errs, fmt.Errorf("monitor %s: %w", *in.Slug, err))
			continue
		}
		creates = append(creates, v)
		if in.Status != nil && *in.Status != StatusActive {
			patches = append(patches, &Input{Slug: in.Slug, Status: in.Status})
		}
	}
	e.mu.RUnlock()
	ids := make([]int64, len(creates))
	if e.shared != nil && len(creates) > 0 {
		if !e.holds(shard) {
			return &Error{Status: 503, Code: "no_shard", Message: fmt.Sprintf("this instance does not hold shard %d, where the monitors belong: retry on the instance that does", shard)}
		}
		slugs := make([]string, len(creates))
		for i, v := range creates {
			slugs[i] = v.Slug
		}
		taken, err := e.shared.TakenSlugs(ctx, slugs)
		if err != nil {
			return storageError(err)
		}
		creates = slices.DeleteFunc(creates, func(v *View) bool {
			if _, found := slices.BinarySearch(taken, v.Slug); found {
				errs = append(errs, fmt.Errorf("monitor %s: %w", v.Slug, slugTaken(v.Slug)))
				return true
			}
			return false
		})
		if ids, err = e.shared.NewMonitorIDs(ctx, len(creates)); err != nil {
			return storageError(err)
		}
	}
	// The rounds, of ensureChunk monitors: the creations first (one
	// request for those of a round), then the changes (a new monitor's
	// status among them).
	var rounds [][]*request
	for from, n := 0, len(creates)+len(patches); from < n; from += ensureChunk {
		to := min(from+ensureChunk, n)
		var round []*request
		if from < len(creates) {
			c := min(to, len(creates))
			round = append(round, e.creations(creates[from:c], ids[from:c], shard))
		}
		for _, in := range patches[max(from, len(creates))-len(creates) : max(to, len(creates))-len(creates)] {
			round = append(round, e.patching(*in.Slug, in))
		}
		rounds = append(rounds, round)
	}
	for _, chunk := range rounds {
		var failed []error
		res := e.dispatch(ctx, &request{apply: func(e *Engine, rs *roundState) (result, error) {
			for _, r := range chunk {
				if _, err := r.apply(e, rs); err != nil {
					failed = append(failed, err)
				}
			}
			return result{}, nil
		}})
		if res.err != nil {
			// The round was not written: nothing of the chunk was made.
			return res.err
		}
		errs = append(errs, failed...)
	}
	return errors.Join(errs...)
}

// same reports whether every field in gives is v's already (a quick look
// that spares the checks of merge, which compiles the schedule, when
// nothing changes).
func (in *Input) same(v *View) bool {
	eq := func(p *string, s string) bool { return p == nil || *p == s }
	eqInt := func(p *int, n int) bool { return p == nil || *p == n }
	return eq(in.Slug, v.Slug) && eq(in.Name, v.Name) && (in.Schedule == nil || *in.Schedule == v.Schedule) &&
		eq(in.Timezone, v.Timezone) && eqInt(in.CheckinMarginSeconds, v.CheckinMarginSeconds) &&
		eqInt(in.MaxRuntimeSeconds, v.MaxRuntimeSeconds) && eqInt(in.FailureThreshold, v.FailureThreshold) &&
		eqInt(in.RecoveryThreshold, v.RecoveryThreshold) && eq(in.AlertWebhookURL, v.AlertWebhookURL) && eq(in.Status, v.Status)
}

// creations is the request that adds the monitors vs (vs[i] numbered
// ids[i], in shard, on a shared store), each as creation does, their
// machines saved on every CPU; its error says which could not be made.
func (e *Engine) creations(vs []*View, ids []int64, shard int) *request {
	return &request{apply: func(e *Engine, rs *roundState) (result, error) {
		_, errs := e.newMons(rs, vs, ids, shard)
		return result{}, errors.Join(errs...)
	}}
}

// parallelChunk is how many monitors one goroutine saves, or publishes,
// when a round makes or changes many: the rest go to other CPUs.
const parallelChunk = 256

// newMons makes the monitors vs in round rs (vs[i] numbered ids[i], in
// shard, on a shared store): for each, a machine started at the round's
// time, its timers armed, its row inserted, indexed. made[i] is vs[i]'s
// monitor, or nil and errs[i] why it could not be made (its slug is
// taken, its shard is not this instance's). The machines are saved, for
// their rows, on every CPU when there are many; the rest is done in
// order, on the caller's goroutine.
func (e *Engine) newMons(rs *roundState, vs []*View, ids []int64, shard int) (made []*mon, errs []error) {
	made, errs = make([]*mon, len(vs)), make([]error, len(vs))
	steps := make([]*step, len(vs))
	for i, v := range vs {
		if e.bySlug[v.Slug] != nil {
			errs[i] = slugTaken(v.Slug)
			continue
		}
		id := ids[i]
		if e.shared == nil {
			e.nextID++
			id = e.nextID
		} else if !e.holds(shard) {
			errs[i] = errMoved
			continue
		}
		m := &mon{row: store.Monitor{ID: id, Shard: shard, Slug: v.Slug, Name: v.Name, PingKey: newPingKey(), AlertWebhookURL: v.AlertWebhookURL, Health: HealthUnknown, CreatedAt: rs.now, UpdatedAt: rs.now}}
		m.handler = &handler{e: e, mon: m}
		rs.touch(m)
		rs.created[m] = true
		st := e.begin(rs, m, rs.now)
		s := v.settings()
		machine, err := monitor.New(monitor.Config{Behavior: e.behavior, Handler: m.handler, Initial: monitor.Fresh{Settings: s, At: rs.now, NextExpected: e.behavior.First(s, rs.now)}})
		if err != nil {
			e.abandon(st)
			errs[i] = err
			continue
		}
		// The step stays open until the machine is saved (below); no
		// action is handed out meanwhile. Indexed now, its slug is
		// taken for the monitors after it.
		e.step = nil
		m.machine = machine
		made[i], steps[i] = m, st
		e.add(m)
	}
	saved := make([][]byte, len(vs))
	inParallel(len(vs), func(i int) {
		if made[i] != nil {
			saved[i], errs[i] = made[i].machine.Save()
		}
	})
	for i, m := range made {
		if m == nil {
			continue
		}
		if errs[i] != nil {
			e.remove(m)
			made[i] = nil
			continue
		}
		m.row.Machine = saved[i]
		st := steps[i]
		st.batch.Add(store.InsertMonitor{Monitor: m.row})
		e.end(st)
		rs.inserted[m] = true
		rs.events = append(rs.events, Event{Kind: EventMonitor, Data: MonitorEvent{Slug: m.row.Slug, Change: "created"}})
	}
	return made, errs
}

// inParallel calls f(i) for each i in [0, n): on every CPU when n is more
// than parallelChunk, as many at a time, and returns once all are done;
// f(i) must touch nothing f(j) touches.
func inParallel(n int, f func(i int)) {
	if n <= parallelChunk {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for from := int(next.Add(parallelChunk) - parallelChunk); from < n; from = int(next.Add(parallelChunk) - parallelChunk) {
				for i := from; i < min(from+parallelChunk, n); i++ {
					f(i)
				}
			}
		})
	}
	wg.Wait()
}
