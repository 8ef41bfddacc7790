package app

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// TestTerminalReplyAtOnce streams replies that stall in a pseudo-terminal:
// what the model sent is on the screen while it stalls, its last
// characters too ("newline", not "newli"), with the prompt drawn below
// the unfinished line; and the end of a reply the redactor held back
// (the first characters of a key, which could have gone on into the
// whole key) is shown once Ctrl-C stops the turn.
func TestTerminalReplyAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{Text: "The key begins " + testKey[:12], Stall: true},
		fakellm.Reply{Text: "Each line ends with a newline", Stall: true})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Which key?\r")
	s.waitScreen(t, "The key begins ")
	require.Eventually(t, func() bool { return len(e.srv.Requests()) == 1 }, runLimit, 10*time.Millisecond)
	s.typeKeys(t, "\x03")
	s.waitScreen(t, "The key begins "+testKey[:12]+"\r\r\n> \x1b[2D\x1b[Kagent: turn stopped")

	s.typeKeys(t, "Explain.\r")
	// The unfinished line is drawn at once, and again, longer, above the
	// prompt.
	s.waitScreen(t, "\x1b[A\r\x1b[KEach line ends with a newline\r\r\n> ")
	s.typeKeys(t, "/quit\r")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.NotContains(t, s.screen.String(), testKey[:13])
	msgs := userMessages(e)
	require.Len(t, msgs, 2)
	assert.Equal(t, "Which key?", msgs[0])
	assert.True(t, strings.HasSuffix(msgs[1], "stopped this turn before the reply ended.]Explain."), msgs[1])
}
