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
// A parallel state's rule for configurations of its regions that New
// never leads to has no path, and says so. With -json, an array of {rule,
// label, at, steps: [{from, event, timer, guards: [{guard, holds}], rules,
// to}]}, steps empty for such a rule.
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
		if len(p.Steps) == 0 {
			if _, err := fmt.Fprintf(w, "  no path from New: it answers configurations of %s's regions that New never leads to and Restore accepts\n", p.Rule.From.Name); err != nil {
				return err
			}
		}
		for i, step := range p.Steps {
			if _, err := fmt.Fprintf(w, "  %d. %s\n", i+1, fsm.StepText(step)); err != nil {
				return err
			}
		}
	}
	return nil
}
