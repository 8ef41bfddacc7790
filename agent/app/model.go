package app

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
)

// modelList is the -model value that lists the models the agent knows
// instead of running.
const modelList = "list"

// providerOf names the provider whose API serves a model the agent
// knows: Anthropic's are named claude-…, the others are OpenAI's.
func providerOf(model string) string {
	if strings.HasPrefix(model, "claude-") {
		return llm.NameAnthropic
	}
	return llm.NameOpenAI
}

// listModels writes "agent -model list": each model whose price or limits
// the agent knows, with its provider, list price, context window and
// largest reply; the defaults marked.
func listModels(w io.Writer) error {
	names := map[string]bool{}
	for n := range maps.Keys(ledger.KnownPrices) {
		names[n] = true
	}
	for n := range maps.Keys(ledger.KnownLimits) {
		names[n] = true
	}
	sorted := slices.SortedFunc(maps.Keys(names), func(a, b string) int {
		return strings.Compare(providerOf(a)+" "+a, providerOf(b)+" "+b)
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROVIDER\tPRICE IN/OUT ($/M TOKENS)\tCONTEXT\tMAX REPLY\t")
	for _, n := range sorted {
		price, window, reply := "-", "-", "-"
		if p, err := ledger.PriceOf(n); err == nil {
			price = fmt.Sprintf("%g / %g", p.Input, p.Output)
		}
		if l, ok := ledger.LimitsOf(n); ok {
			window, reply = fmt.Sprint(l.ContextWindow), fmt.Sprint(l.MaxOutput)
		}
		mark := ""
		if defaultModels[providerOf(n)] == n {
			mark = "(default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n, providerOf(n), price, window, reply, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "A dated name (claude-sonnet-4-5-20250929) is its model's. Another name is sent as it is, with no cost shown unless -price gives it; /model switches a session's model.")
	return err
}

// modelCommand shows the session's model, or switches to another of the
// same provider: the session ends and the same thread goes on with the
// new model, which the thread records; its price and limits follow.
var modelCommand = slashCommand{
	name: "model",
	args: "[NAME]",
	help: "the model, its price and limits; with a name, go on with this thread on that model (agent -model list lists them)",
	run: func(ctx context.Context, s *slashSession, args string) error {
		o := s.opts
		if args == "" {
			return s.say(ctx, describeModel(o))
		}
		name := args
		switch {
		case strings.ContainsAny(name, " \t"):
			return fmt.Errorf("give one model name, e.g. /model %s", defaultModels[o.provider])
		case name == o.model:
			return fmt.Errorf("the session is on %s already", name)
		case name == modelList:
			var b strings.Builder
			if err := listModels(&b); err != nil {
				return err
			}
			return s.say(ctx, b.String())
		}
		if _, known := ledger.LimitsOf(name); known && providerOf(name) != o.provider {
			return fmt.Errorf("%s is a model of %s, and this session talks to %s: start a session with -provider %s -model %s -resume %s",
				name, providerOf(name), o.provider, providerOf(name), name, s.thread)
		}
		next := o
		next.model, next.price = name, ""
		if _, _, err := maxTokensOf(next, name); err != nil {
			return err
		}
		if err := s.afterTurn(ctx, "model"); err != nil {
			return err
		}
		if _, _, err := s.agent.LastTurn(ctx); err != nil {
			return err
		}
		note := ""
		if o.price != "" {
			note = " (-price was " + o.model + "'s: the new model's list price is used, when known)"
		}
		if err := s.say(ctx, fmt.Sprintf("switching to %s: the thread is saved and goes on with it%s", name, note)); err != nil {
			return err
		}
		s.nextModel = name
		return s.switchTo(ctx, s.thread)
	},
}

// describeModel is /model's answer without a name.
func describeModel(o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %s (%s)\n", o.model, o.provider)
	if p, err := priceOf(o); err == nil {
		fmt.Fprintf(&b, "price: $%g in, $%g out per million tokens\n", p.Input, p.Output)
	} else {
		fmt.Fprintf(&b, "price: not known (-price gives it)\n")
	}
	if l, ok := ledger.LimitsOf(o.model); ok {
		fmt.Fprintf(&b, "limits: a context window of %d tokens, replies of %d at most\n", l.ContextWindow, l.MaxOutput)
	} else {
		fmt.Fprintf(&b, "limits: not known (replies of %d tokens; -max-tokens, -context-window set them)\n", ledger.DefaultMaxOutput)
	}
	b.WriteString("/model NAME goes on with this thread on another model of the provider; agent -model list lists those known")
	return b.String()
}
