package app

import (
	"context"
	"errors"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
)

// contextWindowOf returns the model's context window in tokens (see
// ledger.LimitsOf), 0 when it is not known: compaction is then off unless
// -context-window gives it.
func contextWindowOf(model string) int {
	l, _ := ledger.LimitsOf(model)
	return l.ContextWindow
}

// compactCommand compacts the conversation now.
var compactCommand = slashCommand{
	name: "compact",
	help: "replace the earlier conversation by the model's summary of it (the task, decisions, files touched, what remains); your last message and the last reply stay whole",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		if err := s.afterTurn(ctx, "compact"); err != nil {
			return err
		}
		err := s.agent.Compact(ctx)
		if errors.Is(err, agentexec.ErrNothingToCompact) {
			return s.say(ctx, err.Error())
		}
		return err
	},
}
