package api

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// keyLimits limits the pings of each ping key (a token bucket per key).
type keyLimits struct {
	rate float64
	mu   sync.Mutex
	keys map[string]*rate.Limiter
}

// maxLimitedKeys bounds the keys remembered; past it, the buckets start
// afresh (full), which errs on the side of letting pings in.
const maxLimitedKeys = 200_000

func newKeyLimits(perSecond float64) *keyLimits {
	return &keyLimits{rate: perSecond, keys: map[string]*rate.Limiter{}}
}

// allow takes a ping of key at now from its bucket; when the bucket is
// empty it reports false and how long until a ping would be allowed.
func (k *keyLimits) allow(key string, now time.Time) (time.Duration, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.keys[key]
	if l == nil {
		if len(k.keys) >= maxLimitedKeys {
			clear(k.keys)
		}
		l = rate.NewLimiter(rate.Limit(k.rate), max(1, int(2*k.rate)))
		k.keys[key] = l
	}
	if l.AllowN(now, 1) {
		return 0, true
	}
	r := l.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	r.CancelAt(now)
	return wait, false
}
