package main

import (
	"context"
	"errors"
	"strings"

	"github.com/fsmgen/fsmgen/runtime/agentexec"
)

// contextWindows are the context windows, in tokens, of the models the
// agent knows, by the start of their names (dated names included); the
// longest prefix that matches wins.
var contextWindows = []struct {
	prefix string
	tokens int
}{
	{"claude-", 200_000},
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"gpt-5", 400_000},
	{"o3", 200_000},
	{"o4-mini", 200_000},
}

// contextWindowOf returns the model's context window in tokens, 0 when it
// is not known (compaction is then off unless -context-window gives it).
func contextWindowOf(model string) int {
	best, tokens := 0, 0
	for _, w := range contextWindows {
		if strings.HasPrefix(model, w.prefix) && len(w.prefix) > best {
			best, tokens = len(w.prefix), w.tokens
		}
	}
	return tokens
}

// compactCommand compacts the conversation now.
var compactCommand = slashCommand{
	name: "compact",
	help: "replace the earlier conversation by the model's summary of it (the task, decisions, files touched, what remains); your last message and the last reply stay whole",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		err := s.agent.Compact(ctx)
		if errors.Is(err, agentexec.ErrNothingToCompact) {
			return s.say(ctx, err.Error())
		}
		return err
	},
}
