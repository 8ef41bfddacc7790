package monitorengine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/store"
)

// Several instances on a shared store (Postgres) divide the monitors by
// shard: each monitor belongs to one of the store's shards, and an
// instance runs the monitors of the shards whose leases it holds, as one
// instance runs them all. Its lease keeper (keepLeases, a goroutine of
// Run) renews the leases every third of the lease time, claims a fair
// share of the free and expired ones (the shards over the number of live
// instances), releases those beyond it, and hands Run what changed: the
// monitors of the shards it claimed, loaded and armed as at start-up
// (overdue timers fire at once, in deadline order), and the shards it
// lost, whose monitors Run drops. Run stops running a shard when its
// lease may run out (the time of the renewal that kept it, plus the lease
// time, less a fifth of it) even when the keeper cannot reach the
// database; and every round's transaction is fenced by the leases of the
// shards it writes, so a paused instance writes nothing once it lost one.

// shardChange is what the keeper hands Run.
type shardChange struct {
	// validUntil is when the leases renewed or claimed may run out.
	validUntil time.Time
	renewed    []int
	lost       []int
	// gained holds the monitors of each shard claimed, decoded.
	gained map[int][]*mon
	// done, when set, is closed once Run applied the change.
	done chan struct{}
}

// holds reports whether the instance runs shard's monitors.
func (e *Engine) holds(shard int) bool {
	e.shardMu.RLock()
	defer e.shardMu.RUnlock()
	_, ok := e.held[shard]
	return ok
}

// Shards reports how many shards the instance runs, and whether the store
// is shared (false: the instance runs every monitor).
func (e *Engine) Shards() (int, bool) {
	if e.shared == nil {
		return 0, false
	}
	e.shardMu.RLock()
	defer e.shardMu.RUnlock()
	return len(e.held), true
}

// Lease is this instance's hold on a shard.
type Lease struct {
	// Until is when the instance stops running the shard unless its
	// lease is renewed before (zero: it does not hold the shard).
	Until time.Time
	// Claim numbers the claim that gave the shard to the instance: it
	// changes when the instance lost the shard and claimed it again
	// (what another instance did with the shard in between is in the
	// store, not in memory).
	Claim uint64
}

// Lease reports this instance's hold on shard (zero when it does not hold
// it, or the store is not shared).
func (e *Engine) Lease(shard int) Lease {
	if e.shared == nil {
		return Lease{}
	}
	e.shardMu.RLock()
	defer e.shardMu.RUnlock()
	return Lease{Until: e.held[shard], Claim: e.claims[shard]}
}

// LeaseChanged returns a channel that receives when the shards this
// instance holds, or their leases, change (once applied: the monitors of
// a shard claimed are loaded); nil when the store is not shared. It has
// one reader: the jobs engine.
func (e *Engine) LeaseChanged() <-chan struct{} { return e.leaseChanged }

// nudgeLease tells the reader of LeaseChanged.
func (e *Engine) nudgeLease() {
	select {
	case e.leaseChanged <- struct{}{}:
	default:
	}
}

// heldShards returns the shards the instance runs.
func (e *Engine) heldShards() []int {
	e.shardMu.RLock()
	defer e.shardMu.RUnlock()
	out := make([]int, 0, len(e.held))
	for s := range e.held {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// changeShards applies a change of leases (Run's).
func (e *Engine) changeShards(c shardChange) {
	e.dropShards(c.lost)
	e.shardMu.Lock()
	for _, s := range c.renewed {
		if _, ok := e.held[s]; ok {
			e.held[s] = c.validUntil
		}
	}
	e.shardMu.Unlock()
	// A shard lost and claimed again: its monitors anew. (Those of a
	// shard not held are not in memory: one pass over the monitors, not
	// one a shard.)
	var again []int
	e.shardMu.RLock()
	for shard := range c.gained {
		if _, ok := e.held[shard]; ok {
			again = append(again, shard)
		}
	}
	e.shardMu.RUnlock()
	e.dropShards(again)
	var gained []*mon
	for _, mons := range c.gained {
		gained = append(gained, mons...)
	}
	e.install(gained)
	for shard := range c.gained {
		e.shardMu.Lock()
		e.held[shard] = c.validUntil
		e.claimed++
		e.claims[shard] = e.claimed
		e.shardMu.Unlock()
	}
	e.nudgeLease()
	if c.done != nil {
		close(c.done)
	}
}

// dropShards stops running the shards' monitors (Run's).
func (e *Engine) dropShards(shards []int) {
	if len(shards) == 0 {
		return
	}
	e.shardMu.Lock()
	for _, s := range shards {
		delete(e.held, s)
		delete(e.claims, s)
	}
	e.shardMu.Unlock()
	e.nudgeLease()
	e.mu.RLock()
	var drop []*mon
	for _, m := range e.byID {
		if slices.Contains(shards, m.row.Shard) {
			drop = append(drop, m)
		}
	}
	e.mu.RUnlock()
	for _, m := range drop {
		e.disarmAll(m)
		e.remove(m)
	}
}

// expireShards drops the shards whose leases may have run out at now, and
// returns when the next one may (zero: none held) (Run's).
func (e *Engine) expireShards(now time.Time) time.Time {
	var expired []int
	var next time.Time
	e.shardMu.RLock()
	for s, until := range e.held {
		if !now.Before(until) {
			expired = append(expired, s)
		} else if next.IsZero() || until.Before(next) {
			next = until
		}
	}
	e.shardMu.RUnlock()
	if len(expired) > 0 {
		e.log.Warn("leases not renewed in time: their monitors are left to another instance", "shards", expired)
		e.dropShards(expired)
	}
	return next
}

// keepLeases keeps the instance's leases until ctx is done, then frees
// them.
func (e *Engine) keepLeases(ctx context.Context) {
	wait := time.NewTimer(0)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			// Run stops with ctx: nothing runs the shards any more.
			leave, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := e.shared.Leave(leave, e.instance); err != nil {
				e.log.Warn("free the leases on the way out (they expire by themselves)", "err", err)
			}
			cancel()
			return
		case <-e.rebalance:
		case <-wait.C:
		}
		next, err := e.leaseRound(ctx, func(c shardChange) error { return e.toRun(ctx, c) })
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.Is(err, store.ErrPaused):
			// This instance's own pace, not a fault to fix: the leases
			// it did not renew in time are left to the others (Run stops
			// running their shards), and the next round claims again.
			e.log.Warn("keep the leases: this instance paused too long to renew them in time; it claims again", "err", err)
		default:
			e.log.Error("keep the leases", "err", err)
		}
		d := e.lease / 3
		if next > 0 && next < d {
			// Another instance's lease expires first: claim it then.
			d = next + 10*time.Millisecond
		}
		wait.Reset(d)
	}
}

// leaseRound renews the leases, releases the shards beyond a fair share
// and claims those below it, handing the changes to apply (which makes
// Run apply them); it returns when to look again for leases to claim.
//
// Its reads and writes must end by the time the leases it renews (or
// claims) may run out: a round that cannot (the database unreachable,
// the instance paused) is abandoned then, rather than wait on, so that
// the next one starts; Run meanwhile stops running the shards in time.
func (e *Engine) leaseRound(ctx context.Context, apply func(shardChange) error) (time.Duration, error) {
	start := time.Now()
	validUntil := start.Add(e.lease - e.lease/5)
	outer := ctx
	ctx, cancel := context.WithDeadline(ctx, validUntil)
	defer cancel()
	live, err := e.shared.Heartbeat(ctx, e.instance, e.addr, e.lease)
	if err != nil {
		return 0, err
	}
	n := e.shared.Shards()
	fair := (n + max(live, 1) - 1) / max(live, 1)
	held := e.heldShards()
	if len(held) > fair {
		extra := held[fair:]
		held = held[:fair]
		// Run stops running them before another instance may.
		if err := apply(shardChange{lost: extra}); err != nil {
			return 0, err
		}
		if err := e.shared.Release(ctx, e.instance, extra); err != nil {
			return 0, err
		}
		e.log.Info("released leases to other instances", "shards", extra)
	}
	renewed, claimed, next, err := e.shared.Leases(ctx, e.instance, held, max(fair-len(held), 0), e.lease)
	if err != nil {
		return 0, err
	}
	change := shardChange{validUntil: validUntil, renewed: renewed, gained: map[int][]*mon{}}
	for _, s := range held {
		if !slices.Contains(renewed, s) {
			change.lost = append(change.lost, s)
		}
	}
	if len(claimed) > 0 {
		if err := e.loadShards(ctx, claimed, change.gained); err != nil {
			release, cancel := context.WithTimeout(context.WithoutCancel(outer), 5*time.Second)
			defer cancel()
			return next, errors.Join(err, e.shared.Release(release, e.instance, claimed))
		}
		e.log.Info("claimed leases", "shards", claimed, "instances", live)
	}
	if len(change.lost) > 0 {
		e.log.Warn("lost leases", "shards", change.lost)
	}
	return next, apply(change)
}

// loadShards reads and decodes the monitors of the shards into into.
func (e *Engine) loadShards(ctx context.Context, shards []int, into map[int][]*mon) error {
	rows, err := e.shared.ShardMonitors(ctx, shards)
	if err != nil {
		return err
	}
	for _, s := range shards {
		into[s] = nil
	}
	mons, err := e.decodeAll(rows)
	if err != nil {
		return err
	}
	for _, m := range mons {
		into[m.row.Shard] = append(into[m.row.Shard], m)
	}
	return nil
}

// toRun hands Run a change and waits until it is applied.
func (e *Engine) toRun(ctx context.Context, c shardChange) error {
	c.done = make(chan struct{})
	select {
	case e.shardChanges <- c:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeBy returns when the write of a batch fenced by f must end: before
// the first of its leases may run out (zero: no lease bounds it). ok is
// false when one already may have: the batch must not be written.
func (e *Engine) writeBy(f *store.Fence) (by time.Time, ok bool) {
	if f == nil || len(f.Shards) == 0 {
		return time.Time{}, true
	}
	e.shardMu.RLock()
	defer e.shardMu.RUnlock()
	for _, s := range f.Shards {
		until, held := e.held[s]
		if !held {
			return time.Time{}, false
		}
		if by.IsZero() || until.Before(by) {
			by = until
		}
	}
	return by, by.IsZero() || time.Now().Before(by)
}

// fence returns the fence of a round's batch: the leases of the shards of
// the monitors it writes (nil when the store is not shared).
func (e *Engine) fence(rs *roundState) *store.Fence {
	if e.shared == nil {
		return nil
	}
	f := &store.Fence{Instance: e.instance}
	for m := range rs.before {
		if !slices.Contains(f.Shards, m.row.Shard) {
			f.Shards = append(f.Shards, m.row.Shard)
		}
	}
	return f
}

// pickShard returns a shard the instance holds for a new monitor, in
// turn.
func (e *Engine) pickShard() (int, error) {
	held := e.heldShards()
	if len(held) == 0 {
		return 0, errNoShard
	}
	return held[int(e.created.Add(1))%len(held)], nil
}

var errNoShard error = &Error{Status: 503, Code: "no_shard", Message: "this instance runs no monitors yet (it is taking its share of them): retry in a few seconds"}

// errMoved is the answer to a request about a monitor whose shard another
// instance took over while the request was on its way.
var errMoved error = &Error{Status: 503, Code: "monitor_moved", Message: "the monitor moved to another instance while the request was on its way; nothing was changed: retry"}

// Route says where a request about a monitor (by slug, or by ping key
// when slug is empty) is handled: here (""), or at the address of the
// instance that runs it. A monitor that does not exist is handled here
// (which answers 404). With one instance, everything is handled here.
func (e *Engine) Route(ctx context.Context, slug, key string) (string, error) {
	if e.shared == nil {
		return "", nil
	}
	e.mu.RLock()
	local := e.bySlug[slug] != nil
	if slug == "" {
		local = e.byKey[key] != nil
	}
	e.mu.RUnlock()
	if local {
		return "", nil
	}
	m, owner, addr, err := e.shared.Locate(ctx, slug, key)
	switch {
	case err != nil:
		return "", storageError(err)
	case m == nil:
		return "", nil
	case owner == e.instance:
		return "", &Error{Status: 503, Code: "monitor_loading", Message: "this instance is loading the monitor: retry in a moment"}
	case owner == "" || addr == "":
		return "", &Error{Status: 503, Code: "monitor_unowned", Message: fmt.Sprintf("no instance runs the monitor at the moment (its lease ran out and another instance takes it over within %s): retry", e.lease)}
	}
	return addr, nil
}

// storageError is the answer to a request the store failed.
func storageError(err error) error {
	return &Error{Status: 503, Code: "storage_failed", Message: fmt.Sprintf("the server could not read the database (%v): retry", err)}
}

// missing is the answer to a request about a monitor the round does not
// have: on a shared store, one that exists moved to another instance.
func (e *Engine) missing(ctx context.Context, err error, slug, key string) error {
	if e.shared == nil || AsError(err) == nil || (AsError(err).Code != codeNotFound && AsError(err).Code != codeUnknownKey) {
		return err
	}
	m, _, _, lerr := e.shared.Locate(ctx, slug, key)
	if lerr != nil || m == nil {
		return err
	}
	return errMoved
}
