package monitorengine

import (
	"encoding/json"
	"sync"
	"time"
)

// The kinds of Event.
const (
	EventHealth  = "health"  // a monitor's health changed: HealthChange
	EventCheckin = "checkin" // a check-in was recorded or finished: CheckinEvent
	EventMonitor = "monitor" // a monitor was created, updated or deleted: MonitorEvent
)

// Event is a change the hub publishes, once it is stored.
type Event struct {
	Kind string
	Data any
}

// HealthChange is a monitor's change of health.
type HealthChange struct {
	Slug string    `json:"slug"`
	Name string    `json:"name"`
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"at"`
}

// Alert is what an alert webhook is posted.
type Alert struct {
	Event string `json:"event"` // "health_changed"
	HealthChange
}

// CheckinEvent is a check-in recorded or finished.
type CheckinEvent struct {
	Slug    string      `json:"slug"`
	Checkin CheckinView `json:"checkin"`
}

// MonitorEvent is a monitor created, updated or deleted. An update that
// renamed the monitor names its previous slug too: a client drops what it
// showed under that slug.
type MonitorEvent struct {
	Slug         string `json:"slug"`
	Change       string `json:"change"`
	PreviousSlug string `json:"previous_slug,omitempty"`
}

// finishedCheckin is the event of a check-in a round finished, published
// as the CheckinEvent of the check-in as the store has it once the round
// is written (its start's time and source, its finish, its duration),
// which the round does not know without reading it.
type finishedCheckin struct {
	slug      string
	monitorID int64
	id        string
	status    string
	at        time.Time
}

// Hub hands the events to its subscribers (the event stream's clients).
// A subscriber that does not keep up loses its subscription: its channel
// is closed, and the client reconnects.
type Hub struct {
	mu   sync.Mutex
	subs map[chan []byte]struct{}
}

// NewHub returns a hub without subscribers.
func NewHub() *Hub { return &Hub{subs: map[chan []byte]struct{}{}} }

// subscriberBuffer is how many events a subscriber may fall behind.
const subscriberBuffer = 16384

// Subscribe returns a channel of events, each formatted as a server-sent
// event, and the function that ends the subscription.
func (h *Hub) Subscribe() (<-chan []byte, func()) {
	ch := make(chan []byte, subscriberBuffer)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// Subscribers reports how many subscribers the hub has.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Publish hands ev to every subscriber.
func (h *Hub) Publish(ev Event) {
	if h.Subscribers() == 0 {
		return
	}
	data, err := json.Marshal(ev.Data)
	if err != nil {
		return
	}
	msg := []byte("event: " + ev.Kind + "\ndata: " + string(data) + "\n\n")
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- msg:
		default:
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// Close ends every subscription.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
}
