package app

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
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

// knownModels returns the models whose price or limits the agent knows,
// by provider, then by name.
func knownModels() []string {
	names := map[string]bool{}
	for n := range maps.Keys(ledger.KnownPrices) {
		names[n] = true
	}
	for n := range maps.Keys(ledger.KnownLimits) {
		names[n] = true
	}
	return slices.SortedFunc(maps.Keys(names), func(a, b string) int {
		return strings.Compare(providerOf(a)+" "+a, providerOf(b)+" "+b)
	})
}

// isKnownModel reports whether the agent knows model's price or limits,
// a dated name of a model it knows included.
func isKnownModel(model string) bool {
	if _, ok := ledger.LimitsOf(model); ok {
		return true
	}
	_, err := ledger.PriceOf(model)
	return err == nil
}

// listModels writes "agent -model list": each model whose price or limits
// the agent knows, with its provider, list price, context window and
// largest reply; the defaults marked.
func listModels(w io.Writer) error {
	sorted := knownModels()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROVIDER\tPRICE IN/OUT ($/M TOKENS)\tCONTEXT\tMAX REPLY\tIMAGES\t")
	for _, n := range sorted {
		price, window, reply, images := "-", "-", "-", "yes"
		if p, err := ledger.PriceOf(n); err == nil {
			price = fmt.Sprintf("%g / %g", p.Input, p.Output)
		}
		if l, ok := ledger.LimitsOf(n); ok {
			window, reply = fmt.Sprint(l.ContextWindow), fmt.Sprint(l.MaxOutput)
		}
		if ledger.TextOnly(n) {
			images = "no"
		}
		mark := ""
		if defaultModels[providerOf(n)] == n {
			mark = "(default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n, providerOf(n), price, window, reply, images, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "A dated name (claude-sonnet-4-5-20250929) is its model's. Another name is sent as it is, with no cost shown unless -price gives it, and is taken to take images; /model switches a session's model.")
	return err
}

// modelCommand shows the session's model, or switches to another: the
// session ends and the same thread goes on with the new model, and with
// its provider when it is another's (see modelTarget), which the thread
// records; its price and limits follow.
var modelCommand = slashCommand{
	name: "model",
	args: "[[PROVIDER] NAME]",
	help: "the model, its price and limits; with a name, go on with this thread on that model, of this provider or another (agent -model list lists them)",
	run: func(ctx context.Context, s *slashSession, args string) error {
		o := s.opts
		if args == "" {
			return s.say(ctx, describeModel(o))
		}
		if args == modelList {
			var b strings.Builder
			if err := listModels(&b); err != nil {
				return err
			}
			return s.say(ctx, b.String())
		}
		provider, name, err := modelTarget(o.provider, args)
		if err != nil {
			return err
		}
		if name == o.model && provider == o.provider {
			return fmt.Errorf("the session is on %s already", name)
		}
		if provider != o.provider && !s.hasKey(provider) {
			return fmt.Errorf("%s is a model of %s, whose API key %s was not set when the agent started; set it and run: agent -provider %s -model %s -resume %s",
				name, provider, llm.KeyVar(provider), provider, name, s.thread)
		}
		next := o
		next.model, next.price, next.provider = name, "", provider
		if _, _, err := maxTokensOf(next, name); err != nil {
			return err
		}
		if err := s.afterTurn(ctx, "model"); err != nil {
			return err
		}
		if _, _, err := s.agent.LastTurn(ctx); err != nil {
			return err
		}
		var notes []string
		if o.price != "" {
			notes = append(notes, "-price was "+o.model+"'s: the new model's list price is used, when known")
		}
		if provider != o.provider {
			notes = append(notes, fmt.Sprintf("%s's API at %s", provider, baseURLNote(next)))
		}
		note := ""
		if len(notes) > 0 {
			note = " (" + strings.Join(notes, "; ") + ")"
		}
		if err := s.say(ctx, fmt.Sprintf("switching to %s: the thread is saved and goes on with it%s", name, note)); err != nil {
			return err
		}
		s.nextModel = name
		if provider != o.provider {
			s.nextProvider = provider
		}
		return s.switchTo(ctx, s.thread)
	},
}

// modelTarget reads /model's argument: "NAME", or "PROVIDER NAME". A
// model NAME alone is of the provider the agent knows it to be of
// (providerOf, for the models whose limits it knows), else of the
// session's provider, current: a local server's model keeps the session
// on it.
func modelTarget(current, args string) (provider, name string, err error) {
	f := strings.Fields(args)
	switch {
	case len(f) == 2 && slices.Contains(providers, f[0]):
		return f[0], f[1], nil
	case len(f) != 1:
		return "", "", fmt.Errorf("give a model name, or a provider and a name, e.g. /model %s or /model %s %s",
			defaultModels[current], otherProvider(current), defaultModels[otherProvider(current)])
	}
	name = f[0]
	if _, known := ledger.LimitsOf(name); known {
		return providerOf(name), name, nil
	}
	return current, name, nil
}

// providers are the providers /model switches between.
var providers = []string{llm.NameAnthropic, llm.NameOpenAI}

// otherProvider returns the provider that is not p.
func otherProvider(p string) string {
	if p == llm.NameOpenAI {
		return llm.NameAnthropic
	}
	return llm.NameOpenAI
}

// baseURLNote says where the session of o sends its requests: -base-url,
// the provider's variable, or its public API.
func baseURLNote(o options) string {
	if u := sessionBaseURL(o); u != "" {
		return u + " (-base-url)"
	}
	if u := os.Getenv(llm.BaseURLVar(o.provider)); u != "" {
		return u + " ($" + llm.BaseURLVar(o.provider) + ")"
	}
	return "its public address ($" + llm.BaseURLVar(o.provider) + " sets another)"
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
		if l.TextOnly {
			b.WriteString("images: not taken (text only)\n")
		}
	} else {
		fmt.Fprintf(&b, "limits: not known (replies of %d tokens; -max-tokens, -context-window set them)\n", ledger.DefaultMaxOutput)
	}
	if o.subagentModel != "" && o.subagentProvider != "" {
		fmt.Fprintf(&b, "subagents: %s (%s), as -subagent-model says\n", o.subagentModel, o.subagentProvider)
	}
	b.WriteString("/model NAME goes on with this thread on another model, of this provider or another whose key is set (/model PROVIDER NAME names it); agent -model list lists those known")
	return b.String()
}
