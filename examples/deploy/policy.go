package deploy

import "time"

// Policy is the deploy's Behavior, written by hand: how many attempts a
// deploy makes, and how long it waits between them. It is pure, like every
// Behavior: the same events give the same actions.
type Policy struct {
	// Attempts is the number of attempts before the deploy gives up; at
	// least 1.
	Attempts int
	// Backoff is the wait after the first failed attempt; each later one
	// waits twice as long as the one before.
	Backoff time.Duration
}

var _ Behavior = Policy{}

// CanRetry reports whether the deploy may try again after the given
// attempt.
func (p Policy) CanRetry(attempt int) bool { return attempt < p.Attempts }

// RetryDelay says how long to wait after the given attempt: Backoff,
// doubled for each attempt after the first.
func (p Policy) RetryDelay(attempt int) time.Duration {
	return p.Backoff << max(attempt-1, 0)
}

// NextAttempt counts the next attempt.
func (Policy) NextAttempt(attempt int) int { return attempt + 1 }
