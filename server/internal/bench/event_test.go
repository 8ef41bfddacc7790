package bench_test

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
)

// missedAt reads a server-sent event of the hub: for a health change into
// missed, the time it happened (the deadline).
func missedAt(msg []byte) (time.Time, bool) {
	head, data, ok := bytes.Cut(msg, []byte("\ndata: "))
	if !ok || string(head) != "event: "+monitorengine.EventHealth {
		return time.Time{}, false
	}
	var h monitorengine.HealthChange
	if json.Unmarshal(bytes.TrimSpace(data), &h) != nil || h.To != monitorengine.HealthMissed || h.From == monitorengine.HealthMissed {
		return time.Time{}, false
	}
	return h.At, true
}
