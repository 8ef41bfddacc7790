package fsm

import (
	"go/token"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// identRE is what a spec name may look like.
var identRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// initialisms are the words Go spells in capitals (from the Go wiki's list
// of common initialisms, plus LLM).
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true,
	"IP": true, "JSON": true, "LLM": true, "QPS": true, "RAM": true, "RPC": true,
	"SLA": true, "SMTP": true, "SQL": true, "SSH": true, "TCP": true, "TLS": true,
	"TTL": true, "UDP": true, "UI": true, "UID": true, "UUID": true, "URI": true,
	"URL": true, "UTF8": true, "VM": true, "XML": true, "XMPP": true, "XSRF": true,
	"XSS": true,
}

// Words splits a spec name into words at underscores and case changes:
// "CallingLlm" → [Calling Llm], "call_id" → [call id], "LLMError" → [LLM Error].
func Words(name string) []string {
	var words []string
	rs := []rune(name)
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, string(rs[start:end]))
		}
		start = end
	}
	for i, r := range rs {
		switch {
		case r == '_':
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(r):
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush(i)
			}
		}
	}
	flush(len(rs))
	return words
}

// Namer turns spec names into Go names. The zero Namer knows Go's
// initialisms; NewNamer adds a spec's own.
type Namer struct {
	// own are the spec's initialisms, and used those a name has used.
	own, used map[string]bool
}

// NewNamer returns a Namer that also puts the words own lists in
// capitals. own are written in capitals, as GoName writes them.
func NewNamer(own ...string) Namer {
	n := Namer{own: map[string]bool{}, used: map[string]bool{}}
	for _, w := range own {
		n.own[w] = true
	}
	return n
}

// GoName turns a spec name into an exported Go identifier in Go's style
// for initialisms, with the zero Namer (see Namer.GoName).
func GoName(name string) string { return Namer{}.GoName(name) }

// LowerName turns a spec name into an unexported Go identifier, with the
// zero Namer (see Namer.LowerName).
func LowerName(name string) string { return Namer{}.LowerName(name) }

// ParamName turns a spec name into the Go name of a parameter, with the
// zero Namer (see Namer.ParamName).
func ParamName(name string, imports []Import) string { return Namer{}.ParamName(name, imports) }

// GoName turns a spec name into an exported Go identifier in Go's style
// for initialisms. An initialism, Go's or the spec's, is put in capitals
// however it is written ("CallingLlm" → "CallingLLM", "call_id" →
// "CallID", "TCP_OPEN" → "TCPOpen"). The words of a name written all in
// capitals (UPPER_SNAKE, as RFCs name states) are words: "SYN_SENT" →
// "SynSent", "CLOSED" → "Closed". In a name that has lower case letters,
// a word the spec writes in capitals stays so ("CreateTCB", "twoMSL");
// any other word is capitalised ("tcp_syn_sent" → "TCPSynSent").
func (n Namer) GoName(name string) string {
	shouting := !hasLower(name)
	var b strings.Builder
	for _, w := range Words(name) {
		b.WriteString(n.goWord(w, shouting))
	}
	return b.String()
}

// goWord spells one word of a name as GoName does; shouting says the
// whole name is in capitals.
func (n Namer) goWord(w string, shouting bool) string {
	up := strings.ToUpper(w)
	if n.own[up] {
		n.used[up] = true
		return up
	}
	if initialisms[up] || (capitals(w) && !shouting) {
		return up
	}
	rs := []rune(strings.ToLower(w))
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}

// hasLower reports whether a name has a lower case letter.
func hasLower(name string) bool {
	return strings.IndexFunc(name, unicode.IsLower) >= 0
}

// capitals reports whether a word is written in capitals: it has an upper
// case letter and no lower case one ("TCB", "UTF8", "A").
func capitals(w string) bool {
	upper := false
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
		upper = upper || unicode.IsUpper(r)
	}
	return upper
}

// LowerName turns a spec name into an unexported Go identifier: its first
// word in lower case, even an initialism, and the others as GoName spells
// them: "CallingLlm" → "callingLLM", "LLMError" → "llmError", "TCB" →
// "tcb", "createTCB" → "createTCB", "SYN_SENT" → "synSent". A Go keyword
// gets a trailing underscore: "type" → "type_".
func (n Namer) LowerName(name string) string {
	words := Words(name)
	if len(words) == 0 {
		return ""
	}
	shouting := !hasLower(name)
	first := strings.ToLower(words[0])
	var b strings.Builder
	for _, w := range words[1:] {
		b.WriteString(n.goWord(w, shouting))
	}
	rest := b.String()
	if s := first + rest; !token.IsKeyword(s) {
		return s
	}
	return first + rest + "_"
}

// SnakeName turns a spec name into snake case: "CallingLlm" → "calling_llm".
func SnakeName(name string) string {
	words := Words(name)
	for i, w := range words {
		words[i] = strings.ToLower(w)
	}
	return strings.Join(words, "_")
}

// predeclared are Go's predeclared identifiers: a parameter or local
// variable of generated code must not shadow them.
var predeclared = map[string]bool{
	"any": true, "append": true, "bool": true, "byte": true, "cap": true, "clear": true,
	"close": true, "comparable": true, "complex": true, "complex128": true, "complex64": true,
	"copy": true, "delete": true, "error": true, "false": true, "float32": true, "float64": true,
	"imag": true, "int": true, "int16": true, "int32": true, "int64": true, "int8": true,
	"iota": true, "len": true, "make": true, "max": true, "min": true, "new": true, "nil": true,
	"panic": true, "print": true, "println": true, "real": true, "recover": true, "rune": true,
	"string": true, "true": true, "uint": true, "uint16": true, "uint32": true, "uint64": true,
	"uint8": true, "uintptr": true,
}

// localNames are the identifiers generated code uses for receivers,
// parameters and locals of its own: a parameter derived from a spec name
// must not be one of them.
var localNames = map[string]bool{"m": true, "ev": true, "r": true, "b": true, "h": true, "s": true, "v": true, "d": true, "t": true, "tt": true, "from": true}

// generatedImports are the names under which generated files import
// packages of their own (the standard library, fsmgen's runtime and test
// drivers, testify), and the other identifiers they use in function
// bodies: a package of the spec's imports is imported under another name
// than these (see importName).
var generatedImports = map[string]bool{
	"assert": true, "errors": true, "fmt": true, "fsmrt": true, "fsmtest": true, "json": true, "rand": true,
	"require": true, "slices": true, "strconv": true, "strings": true, "sync": true, "testing": true,
	"behaviour": true, "c": true, "data": true, "err": true, "fields": true, "kind": true, "rec": true,
	"rules": true, "script": true, "st": true, "tests": true, "fired": true, "raw": true, "id": true,
}

// ParamName turns a spec name into the unexported Go name of a parameter,
// result or local variable: "call_id" → "callID", "error" → "err" (the Go
// idiom). Another name that would shadow a predeclared identifier, a
// package of the spec's imports or a name of generated code gets a
// trailing underscore: "len" → "len_".
func (n Namer) ParamName(name string, imports []Import) string {
	p := n.LowerName(name)
	if p == "error" {
		p = "err"
	}
	clash := predeclared[p] || localNames[p] || strings.HasPrefix(p, "fsm")
	for _, imp := range imports {
		clash = clash || imp.Alias == p || imp.GoName == p
	}
	if clash && !strings.HasSuffix(p, "_") {
		p += "_"
	}
	return p
}

// initialismRE is what a spec's initialism looks like: a word in
// capitals, as Go names write it.
var initialismRE = regexp.MustCompile(`^[A-Z][A-Z0-9]*$`)

// initialisms checks the spec's own initialisms and returns the Namer
// that spells Go names with them.
func (b *builder) initialisms() Namer {
	var own []string
	for _, w := range b.f.Initialisms {
		switch {
		case !w.Set:
			b.errorf(w.Pos, "an initialism is a word in capitals, e.g. TCB; found nothing")
		case !initialismRE.MatchString(w.Value) && identRE.MatchString(w.Value):
			b.errorf(w.Pos, "initialism %q is not written in capitals: write it as Go names spell it, %s", w.Value, strings.ToUpper(w.Value))
		case !initialismRE.MatchString(w.Value):
			b.errorf(w.Pos, "initialism %q is not a word: write letters and digits in capitals, starting with a letter, e.g. TCB", w.Value)
		case slices.Contains(own, w.Value):
			b.errorf(w.Pos, "initialism %s is listed twice", w.Value)
		default:
			own = append(own, w.Value)
		}
	}
	return NewNamer(own...)
}

// unusedInitialisms warns of the spec's initialisms that no Go name
// fsmgen made uses.
func (b *builder) unusedInitialisms() {
	for _, w := range b.f.Initialisms {
		if b.names.own[w.Value] && !b.names.used[w.Value] {
			b.diags.Warnf(w.Pos, "initialism %s is in no name fsmgen makes a Go name of: remove it", w.Value)
		}
	}
}

// goName returns the Go name of a declaration (what names it in
// messages, e.g. "state Open"): the one the spec gives it under go_name,
// which must be an exported Go identifier, or the one the Namer makes of
// its name.
func (b *builder) goName(what, name string, given spec.String) string {
	if !given.Set {
		return b.names.GoName(name)
	}
	g := given.Value
	switch {
	case !token.IsIdentifier(g):
		b.errorf(given.Pos, "go_name %q of %s is not a Go identifier: use letters, digits and underscores, starting with a capital letter", g, what)
	case !token.IsExported(g):
		b.errorf(given.Pos, "go_name %q of %s is not exported: start it with a capital letter%s", g, what, exported(g))
	default:
		return g
	}
	return b.names.GoName(name)
}

// exported suggests the name with its first letter in capitals, when it
// starts with a letter.
func exported(name string) string {
	rs := []rune(name)
	if !unicode.IsLetter(rs[0]) {
		return ""
	}
	rs[0] = unicode.ToUpper(rs[0])
	return ", e.g. " + string(rs)
}

// goNames reports spec names that turn into the same Go identifier, or
// into one fsmgen generates.
func (b *builder) goNames() {
	type owner struct {
		what string
		pos  diag.Pos
	}
	taken := map[string]owner{}
	for _, r := range Generated {
		taken[r] = owner{what: "a name fsmgen generates"}
	}
	claim := func(id, what string, pos diag.Pos) bool {
		if prev, ok := taken[id]; ok {
			if prev.pos.Line == 0 {
				b.errorf(pos, "%s is %s in Go, %s: rename it or give it a go_name", what, id, prev.what)
			} else {
				b.errorf(pos, "%s is %s in Go, like %s (%s): rename one of them or give one a go_name", what, id, prev.what, prev.pos)
				b.errorf(prev.pos, "%s is %s in Go, like %s (%s): rename one of them or give one a go_name", prev.what, id, what, pos)
			}
			return false
		}
		taken[id] = owner{what: what, pos: pos}
		return true
	}
	if b.m.TimerFired != nil {
		for _, d := range []*Decl{&b.m.TimerFired.Decl, &b.m.StartTimer.Decl, &b.m.CancelTimer.Decl} {
			taken[d.GoName] = owner{what: "the " + d.Name + " fsmgen declares for the timers"}
			taken[d.KindName] = owner{what: "the kind constant of " + d.Name + ", which fsmgen declares for the timers"}
		}
	}
	for _, ds := range b.kindSets() {
		for _, d := range ds.decls {
			if d.Builtin {
				continue
			}
			if d.GoName != "" && claim(d.GoName, ds.what+" "+d.Name, d.Pos) && d.KindName != "" {
				claim(d.KindName, ds.what+" "+d.Name+"'s kind constant", d.Pos)
			}
		}
	}
	for _, a := range b.m.Actions {
		if a.GoName == "Actions" {
			b.errorf(a.Pos, "action %s is %s in Go, the name of the Recorder's list of actions: rename it or give it a go_name", a.Name, a.GoName)
		}
	}
	// A package the spec imports under the Go name of a state, event or
	// action (an alias in capitals) is imported under another name.
	for i, imp := range b.m.Imports {
		if _, clash := taken[imp.GoName]; clash {
			names := aliasesBut(b.m.Imports, i)
			for id := range taken {
				names[id] = true
			}
			b.m.Imports[i].GoName = importName(imp.Alias, names)
		}
	}
	methods := map[string]owner{}
	for _, fns := range [][]*Func{b.m.Guards, b.m.Effects} {
		for _, fn := range fns {
			what := kindWord(fn.Kind) + " " + fn.Name
			if prev, ok := methods[fn.GoName]; ok {
				b.errorf(fn.Pos, "%s is %s in Go, like %s (%s): rename one of them or give one a go_name", what, fn.GoName, prev.what, prev.pos)
				continue
			}
			methods[fn.GoName] = owner{what: what, pos: fn.Pos}
		}
	}
	if !b.diags.HasErrors() {
		b.unusedInitialisms()
	}
}

// kindSet is the declarations of one kind, for checks that treat states,
// events and actions alike.
type kindSet struct {
	what  string
	decls []*Decl
}

func (b *builder) kindSets() []kindSet {
	var ss, es, as []*Decl
	for _, s := range b.all {
		ss = append(ss, &s.Decl)
	}
	for _, e := range b.m.Events {
		es = append(es, &e.Decl)
	}
	for _, a := range b.m.Actions {
		as = append(as, &a.Decl)
	}
	return []kindSet{{"state", ss}, {"event", es}, {"action", as}}
}
