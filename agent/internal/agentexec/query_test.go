package agentexec_test

import (
	"context"
	"encoding/json"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// TestQueryResume stops the agent while a query runs (the thread is saved
// in RunningQuery) and resumes it: a script's resume runs the query again
// (it only reads) and finishes the turn; an interactive resume stops the
// turn and tells the model, as Ctrl-C would. Both replay.
func TestQueryResume(t *testing.T) {
	sig := syscall.SIGUSR1
	query1 := "[query read a.go: result]\npackage a\n[end of the query's result]"
	tests := []struct {
		name         string
		continueTurn bool
		second       []fakellm.Reply
		wantConv     []string
	}{
		{"one-shot runs the query again", true, []fakellm.Reply{{Text: "It is package a."}},
			[]string{"user: Go.", "assistant: Let me read a.go.", "user: " + query1, "assistant: It is package a."}},
		{"interactive stops the turn", false, nil,
			[]string{"user: Go.", "assistant: Let me read a.go.", "user: " + chat.UserStoppedNote}},
	}
	for _, p := range providers {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				s := newSession(t, p, map[string]string{"a.go": "package a\n"}, fakellm.Reply{Text: "Let me read a.go. Then"})
				blocking := toolFunc{name: "read_file", run: func(ctx context.Context, _ json.RawMessage, _ func(chat.ToolProgress)) (string, error) {
					signalSelf(t, sig)
					<-ctx.Done()
					return "", ctx.Err()
				}}
				set, err := tools.NewSet(tools.Options{}, blocking)
				require.NoError(t, err)
				noTools := func(c *behavior.Config) { c.Tools = nil }
				res, err := s.run(t, run{prompt: "Go.", tools: set, signals: []os.Signal{sig}, queries: query.Phrases{}, bcfg: noTools})
				require.NoError(t, err)
				assert.Equal(t, agent.StateRunningQuery, res.State)
				require.Equal(t, agent.StateRunningQuery, s.state(t).Kind())

				s.srv.Add(tt.second...)
				res, err = s.run(t, run{continueTurn: tt.continueTurn, queries: query.Phrases{}, bcfg: noTools})
				require.NoError(t, err)
				assert.True(t, res.Idle)
				assertConversation(t, tt.wantConv, s.conversation(t))
				rep := s.checkReplay(t)
				assert.Equal(t, 2, rep.Sessions)
				s.checkNoSecret(t)
			})
		}
	}
}

// TestQueryRedacted has the model write the API key in the reply that
// asks a query: the text recorded up to the query holds the mark, not the
// key, and so do the next request and the thread.
func TestQueryRedacted(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			s := newSession(t, p, map[string]string{"a.go": "package a\n"},
				fakellm.Reply{Text: "My key is " + testKey + " and I need to read a.go. More."},
				fakellm.Reply{Text: "Done."})
			res, err := s.run(t, run{prompt: "Go.", queries: query.Phrases{}, bcfg: func(c *behavior.Config) { c.Tools = nil }})
			require.NoError(t, err)
			assert.True(t, res.Idle)
			conv := s.conversation(t)
			require.Len(t, conv, 4)
			assert.Equal(t, "assistant: My key is [REDACTED] and I need to read a.go.", conv[1])
			for _, r := range s.srv.Requests() {
				assert.NotContains(t, string(r.Body), testKey)
			}
			s.checkNoSecret(t)
		})
	}
}
