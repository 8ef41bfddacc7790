package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// genAccessors emits, for each field a set of states shares, the function
// that reads it and the one that sets it:
//
//	// ConversationOf returns field conversation of state s, and false for a
//	// state without it: <doc>. Every state inside Running has it.
//	func ConversationOf(s State) (chat.Conversation, bool) {
//		switch s := s.(type) {
//		case CallingLLM:
//			return s.Conversation, true
//		...
//		}
//		return chat.Conversation{}, false
//	}
//
//	// WithConversation returns s with field conversation set to v, and false
//	// (and s as it was) for a state without it. ...
//	func WithConversation(s State, v chat.Conversation) (State, bool) {
//		switch t := s.(type) {
//		case CallingLLM:
//			t.Conversation = v
//			return t, true
//		...
//		}
//		return s, false
//	}
func (g *goGen) genAccessors() {
	for _, a := range g.m.Accessors {
		typ := goType(a.Data.GoType)
		field := a.Field.GoName
		var reads, sets []jen.Code
		for _, s := range a.States {
			reads = append(reads, jen.Case(jen.Id(s.GoName)).Block(jen.Return(jen.Id("s").Dot(field), jen.True())))
			sets = append(sets, jen.Case(jen.Id(s.GoName)).Block(
				jen.Id("t").Dot(field).Op("=").Id("v"),
				jen.Return(jen.Id("t"), jen.True())))
		}
		g.f.Add(comment("", fmt.Sprintf("%s returns field %s of state s, and false %s%s", a.Of, a.Data.Name, whoHas(a), fieldDoc(a))))
		g.f.Func().Id(a.Of).Params(jen.Id("s").Id("State")).Params(typ, jen.Bool()).Block(
			jen.Switch(jen.Id("s").Op(":=").Id("s").Assert(jen.Type())).Block(reads...),
			jen.Return(zeroValue(a.Data), jen.False()))
		g.f.Add(comment("", fmt.Sprintf("%s returns s with field %s set to v, and false (with s as it was) %s", a.With, a.Data.Name, whoHas(a))))
		g.f.Func().Id(a.With).Params(jen.Id("s").Id("State"), jen.Id("v").Add(goType(a.Data.GoType))).Params(jen.Id("State"), jen.Bool()).Block(
			jen.Switch(jen.Id("t").Op(":=").Id("s").Assert(jen.Type())).Block(sets...),
			jen.Return(jen.Id("s"), jen.False()))
	}
}

// fieldDoc is the doc of an accessor's field, as a sentence: " Field at
// is the time of the last step.", or nothing.
func fieldDoc(a *fsm.Accessor) string {
	doc := strings.TrimSuffix(strings.TrimSpace(a.Field.Doc), ".")
	if doc == "" {
		return ""
	}
	return " Field " + a.Data.Name + " " + doc + "."
}

// whoHas says, after "and false", which states have an accessor's field.
func whoHas(a *fsm.Accessor) string {
	if a.Owner == nil {
		return "when s is nil: every state has it."
	}
	return fmt.Sprintf("for a state without it: every state inside %s has it (%s).", a.Owner.Name, list(stateNames(a.States)))
}

// stateNames returns the Go names of states.
func stateNames(ss []*fsm.State) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.GoName
	}
	return out
}

// genAccessorTests emits TestFieldAccessors, which checks each accessor
// pair against every state with fsmtest.Accessor:
//
//	func TestFieldAccessors(t *testing.T) {
//		states := []State{Idle{}, Busy{}, ...}
//		fsmtest.Accessor(t, "conversation", states, []StateKind{StateBusy, ...}, ConversationOf, WithConversation, chat.Conversation{})
//	}
func (g *testGen) genAccessorTests() {
	if len(g.m.Accessors) == 0 {
		return
	}
	var states []jen.Code
	for _, s := range g.m.States {
		states = append(states, jen.Id(s.GoName).Values())
	}
	body := []jen.Code{jen.Id("states").Op(":=").Index().Id("State").Values(states...)}
	for _, a := range g.m.Accessors {
		var has []jen.Code
		for _, s := range a.States {
			has = append(has, jen.Id(s.KindName))
		}
		sample := sampleValue(a.Data.GoType, 0)
		if sample == nil {
			sample = zeroValue(a.Data)
		}
		body = append(body, ft("Accessor").Call(jen.Id("t"), jen.Lit(a.Data.Name), jen.Id("states"), jen.Index().Id("StateKind").Values(has...), jen.Id(a.Of), jen.Id(a.With), sample))
	}
	g.testFunc("FieldAccessors", "TestFieldAccessors checks that the functions of each field a set of states shares read and set it in exactly the states that have it: see fsmtest.Accessor.", body...)
}
