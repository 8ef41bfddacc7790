package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// printPaths prints each rule's witness path: the shortest sequence of
// events that, sent to a machine made by New, fires the rule, with the
// guards' answers each step needs. As text:
//
//	rule 13 (spec/agent.yaml:152:9): CallingLlm --LlmError [canRetry]--> Error ...
//	  1. in WaitingForUserInput, send UserInput → CallingLlm
//	  2. in CallingLlm, send LlmError [canRetry] → Error
//
// With -json, an array of {rule, label, at, steps: [{from, event, timer,
// guards: [{guard, holds}], rules, to}]}.
func printPaths(w io.Writer, m *fsm.Machine, asJSON bool) error {
	if asJSON {
		recs := m.Records()
		if recs == nil {
			recs = []fsm.PathRecord{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(recs)
	}
	for _, p := range m.Paths {
		if _, err := fmt.Fprintf(w, "rule %d (%s): %s\n", p.Rule.Index, p.Rule.Pos, p.Rule.Label); err != nil {
			return err
		}
		for i, step := range p.Steps {
			if _, err := fmt.Fprintf(w, "  %d. %s\n", i+1, fsm.StepText(step)); err != nil {
				return err
			}
		}
	}
	return nil
}
