package fsm

import "github.com/fsmgen/fsmgen/internal/compiler/diag"

// FuncKind tells guards from effects.
type FuncKind int

// The kinds of named functions.
const (
	Guard FuncKind = iota
	Effect
)

// Func is a guard or an effect, implemented by hand as a method of the
// generated Behavior interface. Its signature follows from what it
// declares: it takes what it reads, in order, and a guard returns bool
// while an effect returns what it sets, in order.
type Func struct {
	Name   string
	GoName string
	Kind   FuncKind
	Doc    string
	Pos    diag.Pos
	Reads  []*Field
	Sets   []*Field
	Uses   []*Rule
	// Hooks are the states whose entry, exit or timer calls the effect.
	Hooks []*State
	// InName is, for the built-in guard In(State), the state it names,
	// and In that state (see parallel.go); "" and nil for other guards.
	InName string
	In     *State
	// source is set for the In(State) guard fsmgen writes for a rule that
	// leaves a parallel state from inside a region, which names the
	// rule's source (see parleaveguards.go), and not for one the spec
	// writes.
	source bool
}

// Used reports whether a rule, an entry, an exit or a timer calls fn.
func (fn *Func) Used() bool { return len(fn.Uses) > 0 || len(fn.Hooks) > 0 }

// Set returns the field the effect sets of the given name, or nil.
func (fn *Func) Set(name string) *Field {
	for _, f := range fn.Sets {
		if f.Name == name {
			return f
		}
	}
	return nil
}
