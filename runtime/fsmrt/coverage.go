package fsmrt

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Coverage records which rules of a machine fire, for a program's own
// tests: which transitions does the code never exercise? Make one for the
// machine's rule table and attach it as the machine's observer:
//
//	cov := fsmrt.NewCoverage(order.Rules())
//	m.SetObserver(cov.Observe)
//	... drive the machine ...
//	t.Log(cov)   // "12 of 14 rules fired (85.7%)", and each rule that never did
//
// One Coverage may observe many machines of the same package, from many
// goroutines.
type Coverage[S, E, A Kind] struct {
	rules []Rule[S, E, A]
	mu    sync.Mutex
	fired []bool
}

// NewCoverage returns a Coverage of the rules of a machine's rule table,
// as its package's Rules function returns it.
func NewCoverage[S, E, A Kind](rules []Rule[S, E, A]) *Coverage[S, E, A] {
	return &Coverage[S, E, A]{rules: rules, fired: make([]bool, len(rules))}
}

// Observe records the rule of step s; it is an observer, for SetObserver.
func (c *Coverage[S, E, A]) Observe(s Step[S, E]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.Rule >= 0 && s.Rule < len(c.fired) {
		c.fired[s.Rule] = true
	}
}

// pick returns the rules whose fired flag is want, in rule order.
func (c *Coverage[S, E, A]) pick(want bool) []Rule[S, E, A] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Rule[S, E, A]
	for i, r := range c.rules {
		if c.fired[i] == want {
			r.Actions = slices.Clone(r.Actions)
			out = append(out, r)
		}
	}
	return out
}

// Fired returns the rules that fired, in rule order.
func (c *Coverage[S, E, A]) Fired() []Rule[S, E, A] { return c.pick(true) }

// Missed returns the rules that never fired, in rule order.
func (c *Coverage[S, E, A]) Missed() []Rule[S, E, A] { return c.pick(false) }

// Percent returns the share of the machine's rules that fired, from 0 to
// 100; 100 for a machine without rules.
func (c *Coverage[S, E, A]) Percent() float64 {
	if len(c.rules) == 0 {
		return 100
	}
	return 100 * float64(len(c.Fired())) / float64(len(c.rules))
}

// String reports the coverage: how many rules fired, and each rule that
// never did.
func (c *Coverage[S, E, A]) String() string {
	missed := c.Missed()
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d rules fired (%.1f%%)", len(c.rules)-len(missed), len(c.rules), c.Percent())
	for _, r := range missed {
		fmt.Fprintf(&b, "\nnever fired: %s", r.Label)
	}
	return b.String()
}
