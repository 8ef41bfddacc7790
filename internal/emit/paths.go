package emit

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/fsm"
)

// witness is one node of the prefix tree of the machine's paths: one step
// (an event and the guard answers it needs) after the steps of its parent.
type witness struct {
	up      int // the parent node; -1 for a first step
	way     *fsm.Way
	timerID int           // for a TimerFired, the id the machine gave the timer
	rules   []int         // the rules the machine fires
	actions []*fsm.Action // the actions it hands out
	ran     []string      // the effects it runs
	timers  map[*fsm.Timer]int
	counter int
}

// witnessTree lays the machine's paths out as a prefix tree, so that the
// generated table grows with the number of rules, not with the sum of the
// paths' lengths, and simulates along it what the machine does: the ids
// it gives its timers, the rules it fires, the actions it hands out.
// It returns the nodes and, for each path, its last node.
func witnessTree(m *fsm.Machine) ([]*witness, []int) {
	type key struct {
		up  int
		way *fsm.Way
	}
	index := map[key]int{}
	var nodes []*witness
	// The timers New starts.
	timers := map[*fsm.Timer]int{}
	counter := 0
	for _, run := range m.Start {
		for _, e := range run.Actions {
			if e.Action == m.StartTimer {
				counter++
				timers[e.Args[0].Timer] = counter
			}
		}
	}
	var ends []int
	for _, p := range m.Paths {
		up := -1
		for _, w := range p.Steps {
			k := key{up, w}
			if i, ok := index[k]; ok {
				up = i
				continue
			}
			n := &witness{up: up, way: w, timers: timers, counter: counter}
			if up >= 0 {
				n.timers, n.counter = nodes[up].timers, nodes[up].counter
			}
			n.simulate(m)
			index[k] = len(nodes)
			up = len(nodes)
			nodes = append(nodes, n)
		}
		ends = append(ends, up)
	}
	return nodes, ends
}

// simulate works out, from the timers running before it, what the
// node's step does.
func (n *witness) simulate(m *fsm.Machine) {
	timers := make(map[*fsm.Timer]int, len(n.timers))
	for t, id := range n.timers {
		timers[t] = id
	}
	w := n.way
	if w.Timer != nil {
		n.timerID = timers[w.Timer]
	}
	src := w.From
	for _, r := range w.Rules {
		to := src
		if r.To != nil {
			to = r.To
		}
		n.rules = append(n.rules, r.Index)
		if r.Kind != fsm.Transition {
			continue
		}
		runs := func(list []*fsm.Run) {
			for _, run := range list {
				if run.When != nil && !run.When.Contains(src) {
					continue
				}
				if h := run.Hook(); h != nil && h.Effect != nil {
					n.ran = append(n.ran, h.Effect.Name)
				}
				if run.Delay != "" {
					n.ran = append(n.ran, run.State.Timer.DelayFunc.Name)
				}
			}
		}
		runs(r.Exits)
		if r.Effect != nil {
			n.ran = append(n.ran, r.Effect.Name)
		}
		runs(r.Entries)
		if t := r.Spends; t != nil {
			timers[t] = 0
		}
		for _, run := range r.Exits {
			if run.When != nil && !run.When.Contains(src) {
				continue
			}
			for _, e := range run.Actions {
				if e.Action == m.CancelTimer && timers[e.Args[0].Timer] == 0 {
					continue // spent: nothing to cancel
				}
				n.actions = append(n.actions, e.Action)
			}
		}
		if r.To == nil || !r.To.Transient {
			for _, e := range r.Actions {
				n.actions = append(n.actions, e.Action)
			}
		}
		for _, run := range r.Entries {
			for _, e := range run.Actions {
				if e.Action == m.StartTimer {
					n.counter++
					timers[e.Args[0].Timer] = n.counter
				}
				n.actions = append(n.actions, e.Action)
			}
		}
		src = to
	}
	n.timers = timers
}

// genPaths emits TestPaths, which drives a machine made by New along the
// witness path of every rule and checks the steps it takes, the actions it
// hands out and the effects it runs; together the paths fire every rule.
//
//	var fsmWitness = [...]struct{ up int; event Event; tests []string; rules []int; ... }{...}
//	var fsmPathEnds = [...]int{...}   // rule i's path ends at node fsmPathEnds[i]
//	func TestPaths(t *testing.T) { ... }
func (g *testGen) genPaths() {
	m := g.m
	nodes, ends := witnessTree(m)
	if len(nodes) == 0 {
		return
	}
	var rows []jen.Code
	for _, n := range nodes {
		w := n.way
		event := jen.Op("&").Id(w.Event.GoName).Values()
		if w.Event == m.TimerFired {
			event = jen.Op("&").Id(w.Event.GoName).Values(kv("Timer", jen.Lit(n.timerID)))
		}
		d := []jen.Code{kv("up", jen.Lit(n.up)), kv("event", event)}
		if len(w.Tests) > 0 {
			var tests []jen.Code
			for _, t := range w.Tests {
				tests = append(tests, jen.Lit(t.String()))
			}
			d = append(d, kv("tests", jen.Index().String().Values(tests...)))
		}
		var rules []jen.Code
		for _, r := range n.rules {
			rules = append(rules, jen.Lit(r))
		}
		d = append(d, kv("rules", jen.Index().Int().Values(rules...)))
		if len(n.actions) > 0 && m.HasHandler() {
			var acts []jen.Code
			for _, a := range n.actions {
				acts = append(acts, jen.Id(a.KindName))
			}
			d = append(d, kv("actions", jen.Index().Id("ActionKind").Values(acts...)))
		}
		if len(n.ran) > 0 && m.HasBehavior() {
			var ran []jen.Code
			for _, e := range n.ran {
				ran = append(ran, jen.Lit(e))
			}
			d = append(d, kv("effects", jen.Index().String().Values(ran...)))
		}
		rows = append(rows, jen.Values(d...))
	}
	var endVals []jen.Code
	for _, e := range ends {
		endVals = append(endVals, jen.Lit(e))
	}
	var newArgs []jen.Code
	var run []jen.Code
	if m.HasBehavior() {
		run = append(run, jen.Id("b").Op(":=").Op("&").Id("fsmFake").Values(kv("script", jen.Index().String().Values())))
		newArgs = append(newArgs, jen.Id("b"))
	}
	if m.HasHandler() {
		run = append(run, jen.Id("rec").Op(":=").Op("&").Id("Recorder").Values())
		newArgs = append(newArgs, jen.Id("rec"))
	}
	run = append(run,
		jen.Id("m").Op(":=").Id("New").Call(append(newArgs, jen.Id(m.Initial.GoName).Values())...))
	if m.HasHandler() {
		run = append(run, jen.Id("rec").Dot("Actions").Op("=").Nil().Comment("// New's entries are not the path's"))
	}
	if m.HasBehavior() {
		run = append(run, jen.Id("b").Dot("ran").Op("=").Nil())
	}
	var wantDecl []jen.Code
	wantDecl = append(wantDecl, jen.Var().Id("wantSteps").Index().Id("Step"))
	if m.HasHandler() {
		wantDecl = append(wantDecl, jen.Var().Id("wantActions").Index().Id("ActionKind"))
	}
	if m.HasBehavior() {
		wantDecl = append(wantDecl, jen.Var().Id("wantEffects").Index().String())
	}
	run = append(run, wantDecl...)
	run = append(run, jen.Id("steps").Op(":=").Id("fsmTrace").Call(jen.Id("m")),
		jen.Id("at").Op(":=").Id(m.Initial.KindName))
	var each []jen.Code
	each = append(each, jen.Id("n").Op(":=").Id("fsmWitness").Index(jen.Id("i")))
	if m.HasBehavior() {
		each = append(each, jen.Id("b").Dot("script").Op("=").Append(jen.Id("b").Dot("script"), jen.Id("n").Dot("tests").Op("...")))
	}
	each = append(each,
		jen.If(jen.Err().Op(":=").Id("m").Dot("HandleEvent").Call(jen.Id("n").Dot("event")), jen.Err().Op("!=").Nil()).Block(
			jen.Qual(pkgRequire, "ErrorIs").Call(jen.Id("t"), jen.Err(), jen.Id("ErrRejected"), jen.Lit("step %d"), jen.Id("k"))),
		// The steps the rules make: each starts where the last ended and
		// ends in the rule's target, or stays.
		jen.For(jen.List(jen.Id("_"), jen.Id("r")).Op(":=").Range().Id("n").Dot("rules")).Block(
			jen.Id("to").Op(":=").Id("fsmRules").Index(jen.Id("r")).Dot("To"),
			jen.If(jen.Id("to").Op("==").Lit(0)).Block(jen.Id("to").Op("=").Id("at")),
			jen.Id("wantSteps").Op("=").Append(jen.Id("wantSteps"), jen.Id("Step").Values(
				kv("From", jen.Id("at")), kv("Event", jen.Id("fsmRules").Index(jen.Id("r")).Dot("Event")), kv("Rule", jen.Id("r")), kv("To", jen.Id("to")))),
			jen.Id("at").Op("=").Id("to")))
	if m.HasHandler() {
		each = append(each, jen.Id("wantActions").Op("=").Append(jen.Id("wantActions"), jen.Id("n").Dot("actions").Op("...")))
	}
	if m.HasBehavior() {
		each = append(each, jen.Id("wantEffects").Op("=").Append(jen.Id("wantEffects"), jen.Id("n").Dot("effects").Op("...")))
	}
	run = append(run,
		jen.For(jen.List(jen.Id("k"), jen.Id("i")).Op(":=").Range().Id("fsmPath").Call(jen.Id("end"))).Block(each...),
		jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("wantSteps"), jen.Op("*").Id("steps"), jen.Lit("steps taken")),
		jen.Qual(pkgRequire, "NotEmpty").Call(jen.Id("t"), jen.Op("*").Id("steps")),
		jen.Qual(pkgAssert, "True").Call(jen.Id("t"), jen.Qual(pkgSlices, "ContainsFunc").Call(jen.Op("*").Id("steps"), jen.Func().Params(jen.Id("s").Id("Step")).Bool().Block(jen.Return(jen.Id("s").Dot("Rule").Op("==").Id("rule")))), jen.Lit("the path fires its rule")),
	)
	if m.HasHandler() {
		run = append(run,
			jen.Var().Id("acts").Index().Id("ActionKind"),
			jen.For(jen.List(jen.Id("_"), jen.Id("a")).Op(":=").Range().Id("rec").Dot("Actions")).Block(
				jen.Id("acts").Op("=").Append(jen.Id("acts"), jen.Id("a").Dot("Kind").Call())),
			jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("wantActions"), jen.Id("acts"), jen.Lit("actions handed to the Handler")))
	}
	if m.HasBehavior() {
		run = append(run,
			jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("wantEffects"), jen.Id("b").Dot("ran"), jen.Lit("effects run")),
			jen.Qual(pkgAssert, "Empty").Call(jen.Id("t"), jen.Id("b").Dot("wrong"), jen.Lit("guards tested out of the path's order")),
			jen.Qual(pkgAssert, "Empty").Call(jen.Id("t"), jen.Id("b").Dot("script"), jen.Lit("guards the path expected but the machine did not test")))
	}
	run = append(run, jen.For(jen.List(jen.Id("_"), jen.Id("s")).Op(":=").Range().Op("*").Id("steps")).Block(
		jen.Id("cov").Dot("Observe").Call(jen.Id("s"))))

	f := g.f
	fields := []jen.Code{
		jen.Id("up").Int(),
		jen.Id("event").Id("Event"),
		jen.Id("tests").Index().String(),
		jen.Id("rules").Index().Int(),
	}
	if m.HasHandler() {
		fields = append(fields, jen.Id("actions").Index().Id("ActionKind"))
	}
	if m.HasBehavior() {
		fields = append(fields, jen.Id("effects").Index().String())
	}
	f.Comment("// fsmWitness is the prefix tree of the rules' witness paths: each node is one")
	f.Comment("// event sent after its parent's (up; -1 for the first), with the guards'")
	f.Comment("// answers it needs, the rules the machine then fires and what it hands out.")
	f.Var().Id("fsmWitness").Op("=").Index(jen.Op("...")).Struct(fields...).ValuesFunc(func(grp *jen.Group) {
		for _, r := range rows {
			grp.Line().Add(r)
		}
		grp.Line()
	})
	f.Comment("// fsmPathEnds holds, for each rule in order, the last node of its witness path.")
	f.Var().Id("fsmPathEnds").Op("=").Index(jen.Op("...")).Int().Values(endVals...)
	f.Comment("// fsmPath returns the nodes of the path that ends at node end, first first.")
	f.Func().Id("fsmPath").Params(jen.Id("end").Int()).Index().Int().Block(
		jen.Var().Id("path").Index().Int(),
		jen.For(jen.Id("i").Op(":=").Id("end"), jen.Id("i").Op(">=").Lit(0), jen.Id("i").Op("=").Id("fsmWitness").Index(jen.Id("i")).Dot("up")).Block(
			jen.Id("path").Op("=").Append(jen.Id("path"), jen.Id("i"))),
		jen.Qual(pkgSlices, "Reverse").Call(jen.Id("path")),
		jen.Return(jen.Id("path")))
	f.Add(paragraphs(
		fmt.Sprintf("TestPaths drives a machine made by New along the witness path of each of the %d rules: "+
			"the shortest sequence of events from the initial state that fires it, with the guards "+
			"answering as the path needs, and checks every step the machine takes, the actions it hands "+
			"out and the effects it runs. Together the paths fire every rule; the test reports the rule "+
			"coverage.", len(m.Rules))))
	f.Func().Id("TestPaths").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(
		jen.Var().Id("cov").Id("Coverage"),
		jen.For(jen.List(jen.Id("rule"), jen.Id("end")).Op(":=").Range().Id("fsmPathEnds")).Block(
			jen.Id("t").Dot("Run").Call(jen.Id("fsmRules").Index(jen.Id("rule")).Dot("Label"), jen.Func().Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(run...))),
		jen.Id("t").Dot("Log").Call(jen.Lit("rule coverage of the paths: "), jen.Id("cov").Dot("String").Call()),
		jen.Qual(pkgAssert, "Empty").Call(jen.Id("t"), jen.Id("cov").Dot("Missed").Call(), jen.Lit("rules no path fired")),
		jen.Qual(pkgAssert, "Len").Call(jen.Id("t"), jen.Id("cov").Dot("Fired").Call(), jen.Len(jen.Id("fsmRules"))),
		jen.Qual(pkgAssert, "InDelta").Call(jen.Id("t"), jen.Lit(100.0), jen.Id("cov").Dot("Percent").Call(), jen.Lit(1e-9)),
	)
}

// genCoverage emits Coverage, the rule-coverage observer a user attaches
// in their own tests.
//
//	type Coverage struct { mu sync.Mutex; fired [N]bool }
//	func (c *Coverage) Observe(s Step)
//	func (c *Coverage) Fired() []Rule; Missed() []Rule; Percent() float64; String() string
func (g *goGen) genCoverage() {
	f, n := g.f, len(g.m.Rules)
	recv := func() *jen.Statement { return jen.Id("c").Op("*").Id("Coverage") }
	f.Add(paragraphs(
		fmt.Sprintf("Coverage records which rules of the %s machine fire, for your own tests: which "+
			"transitions does the code never exercise? Attach it with m.SetObserver(c.Observe), or call "+
			"Observe from your own observer; one Coverage may observe many machines, from many "+
			"goroutines. The zero Coverage is ready to use.", g.m.Name)))
	f.Type().Id("Coverage").Struct(
		jen.Id("mu").Qual("sync", "Mutex"),
		jen.Id("fired").Index(jen.Lit(n)).Bool())
	f.Comment("// Observe records the rule of step s; it is an Observer.")
	f.Func().Params(recv()).Id("Observe").Params(jen.Id("s").Id("Step")).Block(
		jen.Id("c").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("c").Dot("mu").Dot("Unlock").Call(),
		jen.If(jen.Id("s").Dot("Rule").Op(">=").Lit(0).Op("&&").Id("s").Dot("Rule").Op("<").Len(jen.Id("c").Dot("fired"))).Block(
			jen.Id("c").Dot("fired").Index(jen.Id("s").Dot("Rule")).Op("=").True()))
	f.Comment("// rules returns the rules whose fired flag is want, in rule order.")
	f.Func().Params(recv()).Id("rules").Params(jen.Id("want").Bool()).Index().Id("Rule").Block(
		jen.Id("c").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("c").Dot("mu").Dot("Unlock").Call(),
		jen.Var().Id("out").Index().Id("Rule"),
		jen.For(jen.List(jen.Id("i"), jen.Id("r")).Op(":=").Range().Id("fsmRules")).Block(
			jen.If(jen.Id("c").Dot("fired").Index(jen.Id("i")).Op("==").Id("want")).Block(
				jen.Id("r").Dot("Actions").Op("=").Qual(pkgSlices, "Clone").Call(jen.Id("r").Dot("Actions")),
				jen.Id("out").Op("=").Append(jen.Id("out"), jen.Id("r")))),
		jen.Return(jen.Id("out")))
	f.Comment("// Fired returns the rules that fired, in rule order.")
	f.Func().Params(recv()).Id("Fired").Params().Index().Id("Rule").Block(jen.Return(jen.Id("c").Dot("rules").Call(jen.True())))
	f.Comment("// Missed returns the rules that never fired, in rule order.")
	f.Func().Params(recv()).Id("Missed").Params().Index().Id("Rule").Block(jen.Return(jen.Id("c").Dot("rules").Call(jen.False())))
	f.Comment("// Percent returns the share of the machine's rules that fired, from 0 to 100.")
	f.Func().Params(recv()).Id("Percent").Params().Float64().Block(
		jen.Return(jen.Lit(100).Op("*").Float64().Call(jen.Len(jen.Id("c").Dot("Fired").Call())).Op("/").Lit(float64(n))))
	f.Comment("// String reports the coverage: how many rules fired, and each rule that never did.")
	f.Func().Params(recv()).Id("String").Params().String().Block(
		jen.Id("missed").Op(":=").Id("c").Dot("Missed").Call(),
		jen.Var().Id("b").Qual("strings", "Builder"),
		jen.Qual(pkgFmt, "Fprintf").Call(jen.Op("&").Id("b"), jen.Lit("%d of %d rules fired (%.1f%%)"), jen.Lit(n).Op("-").Len(jen.Id("missed")), jen.Lit(n), jen.Id("c").Dot("Percent").Call()),
		jen.For(jen.List(jen.Id("_"), jen.Id("r")).Op(":=").Range().Id("missed")).Block(
			jen.Qual(pkgFmt, "Fprintf").Call(jen.Op("&").Id("b"), jen.Lit("\nnever fired: %s"), jen.Id("r").Dot("Label"))),
		jen.Return(jen.Id("b").Dot("String").Call()))
}
