package threadsync

import "encoding/json"

// PushBody is the body of PUT /api/threads/{id}, the contract between the
// agent and the server (cmd/server): the thread as runtime/thread encodes
// it, redacted, and its revision.
type PushBody struct {
	// Revision orders the pushes of one thread: the server applies a push
	// only over an older revision, answers the same revision with the same
	// thread as a success that changes nothing, and refuses an older one
	// (409). The agent uses the thread's Updated time in nanoseconds,
	// raised past the last revision it pushed when the clock went back.
	Revision int64 `json:"revision"`
	// Thread is the thread.Thread, as JSON.
	Thread json.RawMessage `json:"thread"`
}

// PushReply is the server's answer to a push it accepted (200).
type PushReply struct {
	ID       string `json:"id"`
	Revision int64  `json:"revision"`
	// Stored is false when the server held this revision already.
	Stored bool `json:"stored"`
}
