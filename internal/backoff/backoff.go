// Package backoff holds the one rule of exponential backoff that the
// agent and the server share: a wait that starts at a base, doubles for
// each retry after the first, and stops at a cap.
//
// What each user adds to it stays with that user, as it is part of its
// own behaviour: the agent's LLM retries take a server's Retry-After in
// its place, the thread's sync keeps a random half or more of it and
// waits at least the server's Retry-After, the jobs and the alert
// webhooks use it as it is.
package backoff

import "time"

// Exponential is the wait before the attempt-th retry (1 for the first):
// base, doubled for each retry after the first, at most limit. An attempt
// of 1 or less waits base (at most limit). The doubling stops at limit, so
// no attempt, however late, overflows.
func Exponential(base, limit time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		if d > limit/2 {
			d = limit
			break
		}
		d *= 2
	}
	return min(d, limit)
}
