package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/prose"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Import paths the generated code uses, in one place.
const (
	pkgJSON   = "encoding/json"
	pkgFsmrt  = "github.com/fsmgen/fsmgen/runtime/fsmrt"
	pkgSlices = "slices"
)

// goGen emits the machine's Go package.
type goGen struct {
	m *fsm.Machine
	f *jen.File
	// completing is the parallel state whose done transition is being
	// emitted: leaving it, every region is in one of its final states.
	completing *fsm.State
	// beside is, while the rule of a parallel state that leaves it from
	// inside a region is emitted in regionsTogether, what the other
	// regions take beside it (see parbeside.go); nil otherwise.
	beside *beside
	// leaving is, while a rule of a parallel state that leaves it from
	// inside a region is emitted, that rule's source (Rule.Source): its
	// region is in a leaf inside it, so the exits of its other leaves
	// are not written (see leavesOf).
	leaving *fsm.State
	// restUsed is set once a rule's code calls rest (see keeps).
	restUsed bool
}

// GoFile returns the generated package for m as a jennifer file.
func GoFile(m *fsm.Machine) *jen.File {
	g := &goGen{m: m, f: newFile(m, m.Package, true)}
	g.genPackageDoc()
	g.genVersion()
	g.genKinds()
	g.genInterfaces()
	g.genDecls()
	g.genAccessors()
	g.genBehavior()
	g.genHandler()
	g.genConfig()
	g.genRules()
	g.genMachine()
	g.genHandleEvent()
	g.genOtherwise()
	g.genChoices()
	g.genDone()
	g.genHostDone()
	g.genHostDones()
	g.genSettle()
	g.genEventless()
	g.genWaitIn()
	g.genStartSettle()
	g.genQuietLeaves()
	g.genMacro()
	g.genTakes()
	g.genTimers()
	g.genDeferral()
	g.genRest()
	g.genUnmarshal()
	g.genKindText()
	g.genRegions()
	return g.f
}

// kv is one keyed element of a composite literal. Literals are written
// with kv in the order of the type's fields, as by hand (jen.Dict sorts
// its keys).
func kv(key string, val jen.Code) jen.Code { return jen.Id(key).Op(":").Add(val) }

// short completes a function declaration with a body of one line, which
// gofmt keeps on one line when it fits: func (A) Kind() StateKind { return StateA }.
func short(decl *jen.Statement, stmts ...jen.Code) *jen.Statement {
	decl.Op("{")
	for i, s := range stmts {
		if i > 0 {
			decl.Op(";")
		}
		decl.Add(s)
	}
	return decl.Op("}")
}

// filled writes strings as the elements of a composite literal, as many
// on a line as fit in about 80 columns.
func filled(ss []string) func(*jen.Group) {
	return func(grp *jen.Group) {
		width := 80
		for _, s := range ss {
			lit := fmt.Sprintf("%q", s)
			if width+len(lit)+2 > 80 {
				grp.Line().Lit(s)
				width = 0
			} else {
				grp.Lit(s)
			}
			width += len(lit) + 2
		}
		grp.Line()
	}
}

// anyOf joins tests with ||, in their order: nil when there are none.
func anyOf(tests []*jen.Statement) *jen.Statement { return joined(tests, "||") }

// allOf joins tests with &&, in their order: nil (a nil jen.Code, not a
// nil *jen.Statement in one) when there are none.
func allOf(tests []*jen.Statement) jen.Code {
	if len(tests) == 0 {
		return nil
	}
	return joined(tests, "&&")
}

// joined joins tests with the operator op, in their order: nil when there
// are none.
func joined(tests []*jen.Statement, op string) *jen.Statement {
	var out *jen.Statement
	for i, t := range tests {
		if i == 0 {
			out = t
		} else {
			out = jen.Add(out).Op(op).Add(t)
		}
	}
	return out
}

// rt names an identifier of package fsmrt.
func rt(name string) *jen.Statement { return jen.Qual(pkgFsmrt, name) }

// kinds are the type arguments of fsmrt's machine types.
func kinds(n int) []jen.Code {
	return []jen.Code{jen.Id("StateKind"), jen.Id("EventKind"), jen.Id("ActionKind")}[:n]
}

// core is the machine's fsmrt.Core, m.core.
func core() *jen.Statement { return jen.Id("m").Dot("core") }

// decls returns the declarations of one kind: "state", "event" or "action".
func decls(m *fsm.Machine, what string) []*fsm.Decl {
	var out []*fsm.Decl
	switch what {
	case "state":
		for _, s := range m.States {
			out = append(out, &s.Decl)
		}
	case "event":
		for _, e := range m.Events {
			out = append(out, &e.Decl)
		}
	default:
		for _, a := range m.Actions {
			out = append(out, &a.Decl)
		}
	}
	return out
}

// kindSets describes the three kinds of declarations: their Go interface,
// kind type and marker method.
var kindSets = []struct{ what, iface, kind, marker string }{
	{"state", "State", "StateKind", "isState"},
	{"event", "Event", "EventKind", "isEvent"},
	{"action", "Action", "ActionKind", "isAction"},
}

// genPackageDoc emits the package comment from the spec's doc.
func (g *goGen) genPackageDoc() {
	m := g.m
	lines := paragraphLines(
		fmt.Sprintf("Package %s implements the %s state machine of %s.", m.Package, m.Name, strings.Join(docLines(m.SpecFile), " ")),
		m.Doc,
		"Feed events to a Machine with HandleEvent: it decides what happens, "+
			"calls the guards and effects of its Behavior, and hands the actions to perform "+
			"to its Handler, in order. The machine is synchronous and deterministic: it does "+
			"no I/O, and the same events always give the same actions, so an event log replays exactly.",
	)
	for _, l := range lines {
		g.f.PackageComment(strings.TrimRight("// "+l, " "))
	}
}

// genVersion emits the compile-time check that the file and package fsmrt
// were made for each other:
//
//	const (
//		_ = fsmrt.RegenerateWithNewerFsmgen(7 - fsmrt.MinVersion)
//		_ = fsmrt.UpgradeFsmgenRuntime(fsmrt.MaxVersion - 7)
//	)
func (g *goGen) genVersion() {
	g.f.Comment("// This file needs the package fsmrt of the fsmgen that wrote it.")
	g.f.Const().Defs(
		jen.Id("_").Op("=").Add(rt("RegenerateWithNewerFsmgen")).Call(jen.Lit(fsmrt.GenVersion).Op("-").Add(rt("MinVersion"))),
		jen.Id("_").Op("=").Add(rt("UpgradeFsmgenRuntime")).Call(rt("MaxVersion").Op("-").Lit(fsmrt.GenVersion)),
	)
}

// kindType returns the narrowest unsigned type that numbers n kinds from
// 1 (0 is no kind): uint8 up to 255 of them, then uint16, then uint32.
func kindType(n int) *jen.Statement {
	switch {
	case n <= 1<<8-1:
		return jen.Uint8()
	case n <= 1<<16-1:
		return jen.Uint16()
	}
	return jen.Uint32()
}

// genKinds emits, for states, events and actions:
//
//	type StateKind uint8 // or wider, for more than 255 states
//	const ( StateA StateKind = iota + 1; ... )
//	func (k StateKind) String() string { return fsmrt.KindName(k, "StateKind", fsmStateNames[:]) }
//	var fsmStateNames = [...]string{"A", ...}
func (g *goGen) genKinds() {
	for _, ks := range kindSets {
		ds := kindDecls(g.m, ks.what)
		g.f.Add(comment("", fmt.Sprintf("%s identifies %s %s of the %s machine. The zero %s is no %s.", ks.kind, prose.Article(ks.what), ks.what, g.m.Name, ks.kind, ks.what)))
		g.f.Type().Id(ks.kind).Add(kindType(len(ds)))
		if len(ds) == 0 {
			g.f.Comment(fmt.Sprintf("// String returns %s(k): the machine has no %ss.", ks.kind, ks.what))
			short(g.f.Func().Params(jen.Id("k").Id(ks.kind)).Id("String").Params().String(),
				jen.Return(rt("KindName").Call(jen.Id("k"), jen.Lit(ks.kind), jen.Nil())))
			continue
		}
		consts := make([]jen.Code, 0, len(ds))
		names := make([]string, 0, len(ds))
		for i, d := range ds {
			c := jen.Id(d.KindName)
			if i == 0 {
				c.Id(ks.kind).Op("=").Iota().Op("+").Lit(1)
			}
			consts = append(consts, c)
			names = append(names, d.Name)
		}
		g.f.Add(comment("", fmt.Sprintf("The %ss of the %s machine: %s identifies the %s %s, and so on.", ks.what, g.m.Name, ds[0].KindName, ks.what, ds[0].Name)))
		g.f.Const().Defs(consts...)
		namesVar := "fsm" + ks.iface + "Names"
		g.f.Comment(fmt.Sprintf("// String returns the %s's name as the spec writes it.", ks.what))
		short(g.f.Func().Params(jen.Id("k").Id(ks.kind)).Id("String").Params().String(),
			jen.Return(rt("KindName").Call(jen.Id("k"), jen.Lit(ks.kind), jen.Id(namesVar).Index(jen.Op(":")))))
		g.f.Comment(fmt.Sprintf("// %s are the names of the %ss, in kind order.", namesVar, ks.what))
		g.f.Var().Id(namesVar).Op("=").Index(jen.Op("...")).String().ValuesFunc(filled(names))
	}
}

// genUnmarshal emits the decoding of states, events and actions, a table
// of decoders by kind:
//
//	func UnmarshalState(data []byte) (State, error) { return fsmrt.Unmarshal(&fsmDesc, "state", data, fsmStateDecoders) }
//	var fsmStateDecoders = map[string]fsmrt.Decoder[State]{
//		"a": fsmrt.Value[A, State](&fsmDesc, "state a"),
//	}
func (g *goGen) genUnmarshal() {
	for _, ks := range kindSets {
		decoder := "Pointer"
		if ks.what == "state" {
			decoder = "Value"
		}
		var entries []jen.Code
		for _, d := range decls(g.m, ks.what) {
			dec := rt(decoder).Types(jen.Id(d.GoName), jen.Id(ks.iface)).Call(jen.Op("&").Id("fsmDesc"), jen.Lit(ks.what+" "+d.Snake))
			entries = append(entries, jen.Lit(d.Snake).Op(":").Add(dec))
			for _, old := range d.RenamedFrom {
				entries = append(entries, jen.Lit(fsm.SnakeName(old)).Op(":").Add(dec.Clone()))
			}
		}
		decoders := "fsm" + ks.iface + "Decoders"
		g.f.Comment(fmt.Sprintf("// Unmarshal%s decodes %s %s written by its MarshalJSON method.", ks.iface, prose.Article(ks.what), ks.what))
		short(g.f.Func().Id("Unmarshal"+ks.iface).Params(jen.Id("data").Index().Byte()).Params(jen.Id(ks.iface), jen.Error()),
			jen.Return(rt("Unmarshal").Call(jen.Op("&").Id("fsmDesc"), jen.Lit(ks.what), jen.Id("data"), jen.Id(decoders))))
		g.f.Comment(fmt.Sprintf("// %s decode the %ss, by kind (and by the kinds they had before).", decoders, ks.what))
		g.f.Var().Id(decoders).Op("=").Map(jen.String()).Add(rt("Decoder")).Types(jen.Id(ks.iface)).ValuesFunc(table(entries))
	}
}
