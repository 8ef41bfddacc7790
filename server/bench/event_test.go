package bench_test

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/fsmgen/fsmgen/server/monitors"
)

// missedAt reads a server-sent event of the hub: for a health change into
// missed, the time it happened (the deadline).
func missedAt(msg []byte) (time.Time, bool) {
	head, data, ok := bytes.Cut(msg, []byte("\ndata: "))
	if !ok || string(head) != "event: "+monitors.EventHealth {
		return time.Time{}, false
	}
	var h monitors.HealthChange
	if json.Unmarshal(bytes.TrimSpace(data), &h) != nil || h.To != monitors.HealthMissed || h.From == monitors.HealthMissed {
		return time.Time{}, false
	}
	return h.At, true
}
