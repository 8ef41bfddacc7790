package tools

import (
	"maps"
	"slices"
)

// Approval says whether a call of a tool needs the user's approval before
// it runs. The approval policy (the agent's -approve flag) applies to
// tools whose Approval is ApprovalPolicy; a tool that carries a setting of
// its own (an MCP server's entry in the agent's config file names one per
// tool) overrides it.
type Approval string

// The approvals a tool can ask for.
const (
	// ApprovalPolicy leaves the decision to the session's approval
	// policy, as for the built-in tools: a mutating tool is asked about
	// under -approve untrusted, a read-only one is not.
	ApprovalPolicy Approval = ""
	// ApprovalAlways asks before every call, whatever the policy.
	ApprovalAlways Approval = "always"
	// ApprovalNever never asks, whatever the policy.
	ApprovalNever Approval = "never"
)

// Approvable is implemented by a tool that carries its own approval
// setting and says whether it only reads; [Set.Approval] reads the
// first.
type Approvable interface {
	// Approval is the tool's approval setting.
	Approval() Approval
	// ReadOnly reports whether the tool's calls change nothing: such
	// calls run in parallel and do not count for the commit snapshot.
	ReadOnly() bool
}

// Approval returns the approval setting of the tool name: its own when it
// is [Approvable], else ApprovalPolicy (also for an unknown name).
func (s *Set) Approval(name string) Approval {
	if a, ok := s.tools[name].(Approvable); ok {
		return a.Approval()
	}
	return ApprovalPolicy
}

// Tool returns the tool name and whether the set has it.
func (s *Set) Tool(name string) (Tool, bool) {
	t, ok := s.tools[name]
	return t, ok
}

// With returns a new set holding the tools of s and the given ones, which
// must not reuse a name.
func (s *Set) With(tools ...Tool) (*Set, error) {
	n := *s
	n.tools, n.names, n.refused = maps.Clone(s.tools), slices.Clone(s.names), maps.Clone(s.refused)
	if err := n.add(tools); err != nil {
		return nil, err
	}
	return &n, nil
}
