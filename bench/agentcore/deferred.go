package agentcore

// The machine's deferred events (spec/agent.yaml: Running defers
// UserInput): a message the user types during a turn is held, in order,
// and handled once the machine waits for input again, in the step that
// brought it there.

// Defers reports whether state s defers events of kind k: a user's
// message in every state of a turn.
func Defers(s State, k EventKind) bool {
	return k == UserInput && s != WaitingForUserInput && s != ShuttingDown
}

// Defer holds a copy of ev, for Recall: no action, no change of state.
func (c *Core) Defer(ev *Event) {
	c.deferred = append(c.deferred, *ev)
}

// Deferred returns how many events the machine holds.
func (c *Core) Deferred() int { return len(c.deferred) }

// Recall hands the events held to handle, oldest first, as long as the
// machine (whose state state returns) waits for input (the first one it
// takes starts a turn, whose states defer the rest), after a step of the
// event at hand that returned act. It returns the last action, and drops
// what it holds once the machine is shutting down (ShuttingDown ignores
// every event).
func (c *Core) Recall(state func() State, act *Action, handle func(*Event) (*Action, error)) (*Action, error) {
	if state() == ShuttingDown {
		clear(c.deferred)
		c.deferred = c.deferred[:0]
		return act, nil
	}
	for state() == WaitingForUserInput && len(c.deferred) > 0 {
		ev := c.deferred[0]
		c.deferred = c.deferred[1:]
		next, err := handle(&ev)
		if err != nil {
			return nil, err
		}
		if next != nil {
			act = next
		}
	}
	return act, nil
}
