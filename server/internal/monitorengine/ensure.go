package monitorengine

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ensureChunk bounds the monitors one request of Ensure makes or changes:
// a round (one transaction) each. Each round rewrites the pages of the
// monitors' index of ping keys it inserts into, random keys spread over
// all of it, and on SQLite copies them to the file at its checkpoint: a
// first start of 100,000 jobs made 184,000 writes and 59,000 reads of
// pages in rounds of 2,000, 125,000 and 42,000 in rounds of 10,000. Other
// requests wait behind a round (some tenths of a second for 10,000).
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
	// The requests: the creations first, then the changes (a new monitor's
	// status among them).
	var reqs []*request
	for i, v := range creates {
		reqs = append(reqs, e.creation(v, ids[i], shard))
	}
	for _, in := range patches {
		reqs = append(reqs, e.patching(*in.Slug, in))
	}
	for chunk := range slices.Chunk(reqs, ensureChunk) {
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
