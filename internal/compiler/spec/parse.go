package spec

import (
	"bytes"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/suggest"
)

// MaxSize is the largest spec file accepted, in bytes.
const MaxSize = 1 << 20

// maxDepth bounds the nesting of YAML collections; a spec never needs more.
const maxDepth = 48

// maxNodes bounds the number of YAML nodes after alias expansion, so that an
// alias bomb is refused instead of exhausting memory.
const maxNodes = 100_000

// Version is the spec language version this package reads.
const Version = "2"

// Parse parses the spec in src, read from path. It returns the syntax tree
// and every problem found; the tree is nil when the file could not be read
// as YAML at all.
func Parse(path string, src []byte) (*File, diag.List) {
	p := &parser{path: path}
	f := p.file(src)
	p.diags.Sort()
	return f, p.diags
}

type parser struct {
	path  string
	src   []byte
	diags diag.List
	nodes int
	// lines is how many lines the source has: yaml.v3 places an empty
	// node after the last one ("---" alone), which no diagnostic may
	// point past.
	lines int
}

func (p *parser) pos(n *yaml.Node) diag.Pos {
	if p.lines > 0 && n.Line > p.lines {
		return diag.Pos{File: p.path, Line: p.lines}
	}
	return diag.Pos{File: p.path, Line: n.Line, Col: n.Column}
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	pos := diag.Pos{File: p.path}
	if n != nil {
		pos = p.pos(n)
	}
	p.diags.Errorf(pos, format, args...)
}

func (p *parser) file(src []byte) *File {
	whole := diag.Pos{File: p.path}
	switch {
	case len(src) > MaxSize:
		p.diags.Errorf(whole, "spec is %d bytes, larger than the %d-byte limit: split the machine or trim its docs", len(src), MaxSize)
		return nil
	case len(bytes.TrimSpace(src)) == 0:
		p.diags.Errorf(whole, "spec is empty: start it with \"version: %s\"", Version)
		return nil
	case bytes.IndexByte(src, 0) >= 0:
		line := len(diag.Lines(src[:bytes.IndexByte(src, 0)]))
		p.diags.Errorf(diag.Pos{File: p.path, Line: line}, "spec contains a NUL byte: it is not a text file")
		return nil
	case !utf8.Valid(src):
		line := len(diag.Lines(src[:invalidUTF8(src)]))
		p.diags.Errorf(diag.Pos{File: p.path, Line: line}, "spec is not valid UTF-8")
		return nil
	}
	p.lines = len(diag.Lines(src))
	p.src = src
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		p.yamlError(err)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || isNothing(doc.Content[0]) {
		p.diags.Errorf(whole, "spec is empty: start it with \"version: %s\"", Version)
		return nil
	}
	if !p.bounded(doc.Content[0], 0) {
		return nil
	}
	root := doc.Content[0]
	f := &File{Path: p.path, Pos: p.pos(root)}
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "spec must be a mapping of keys such as version, machine, states; found %s", kindName(root))
		return nil
	}
	if len(root.Content) == 0 || root.Content[0].Value != "version" {
		p.errorf(root, "spec must start with \"version: %s\"", Version)
	}
	p.mapping(root, p.fileKeys(f))
	for _, key := range []struct {
		name string
		set  bool
	}{{"version", f.Version.Set}, {"machine", f.Machine.Set}, {"package", f.Package.Set}, {"states", len(f.States) > 0}, {"events", len(f.Events) > 0}} {
		if !key.set {
			p.errorf(root, "spec has no %q", key.name)
		}
	}
	return f
}

// The handlers of each mapping the parser reads are made by a method
// named for it (fileKeys, stateKeys, ...): the keys of those maps are the
// keys fsmgen accepts there, which a test compares with the JSON Schema's.

// fileKeys returns the handlers of the top-level keys, filling f.
func (p *parser) fileKeys(f *File) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"version": func(_, v *yaml.Node) {
			f.Version = p.str(v)
			switch {
			case !f.Version.Set || f.Version.Value == Version:
			case f.Version.Value == "1":
				p.errorf(v, "version 1 specs are no longer read: version %s declares what each guard and effect reads and sets; see \"From version 1\" in docs/spec.md", Version)
			default:
				p.errorf(v, "unsupported spec version %q: this fsmgen reads version %s", f.Version.Value, Version)
			}
		},
		"machine": func(_, v *yaml.Node) { f.Machine = p.str(v) },
		"package": func(_, v *yaml.Node) { f.Package = p.str(v) },
		"doc":     func(_, v *yaml.Node) { f.Doc = p.str(v) },
		"imports": func(_, v *yaml.Node) {
			if v := resolve(v); v.Kind == yaml.SequenceNode {
				p.errorf(v, "imports maps each package's qualifier to its import path, found a list: write imports: {time: time, chat: example.com/chat}")
				return
			}
			p.each(v, func(k, v *yaml.Node) { f.Imports = append(f.Imports, Import{Alias: p.str(k), Path: p.str(v)}) })
		},
		"output": func(_, v *yaml.Node) { p.mapping(v, p.outputKeys(&f.Output)) },
		"states": func(_, v *yaml.Node) { p.each(v, func(k, v *yaml.Node) { f.States = append(f.States, p.state(k, v)) }) },
		"events": func(_, v *yaml.Node) { p.each(v, func(k, v *yaml.Node) { f.Events = append(f.Events, p.decl(k, v)) }) },
		"actions": func(_, v *yaml.Node) {
			p.each(v, func(k, v *yaml.Node) { f.Actions = append(f.Actions, p.action(k, v)) })
		},
		"guards":      func(_, v *yaml.Node) { p.each(v, func(k, v *yaml.Node) { f.Guards = append(f.Guards, p.fn(k, v)) }) },
		"effects":     func(_, v *yaml.Node) { p.each(v, func(k, v *yaml.Node) { f.Effects = append(f.Effects, p.fn(k, v)) }) },
		"transitions": func(_, v *yaml.Node) { p.transitions(v, f) },
		"behavior":    func(_, v *yaml.Node) { f.Behavior = p.str(v) },
		"initialisms": func(_, v *yaml.Node) { f.Initialisms = p.names(v) },
		"defer_limit": func(_, v *yaml.Node) { f.DeferLimit = p.str(v) },
		"breaks": func(_, v *yaml.Node) {
			if v.Kind != yaml.SequenceNode {
				p.errorf(v, "breaks is a list of the changes made on purpose, each with change and why")
				return
			}
			for _, n := range v.Content {
				b := Break{Pos: p.pos(n)}
				p.mapping(n, p.breakKeys(&b))
				if n.Kind == yaml.MappingNode && (!b.Change.Set || !b.Why.Set) {
					p.errorf(n, "a declared break names the change (as fsmgen diff names it) and says why")
				}
				f.Breaks = append(f.Breaks, b)
			}
		},
	}
}

// breakKeys returns the handlers of the keys of an entry of "breaks",
// filling b.
func (p *parser) breakKeys(b *Break) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"change": func(_, v *yaml.Node) { b.Change = p.str(v) },
		"why":    func(_, v *yaml.Node) { b.Why = p.str(v) },
	}
}

// outputKeys returns the handlers of the keys of "output", filling o.
func (p *parser) outputKeys(o *Output) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"go":       func(_, v *yaml.Node) { o.Go = p.str(v) },
		"diagram":  func(_, v *yaml.Node) { o.Diagram = p.str(v) },
		"table":    func(_, v *yaml.Node) { o.Table = p.str(v) },
		"temporal": func(_, v *yaml.Node) { o.Temporal = p.str(v) },
	}
}

// bounded refuses documents nested too deeply or, through aliases, too large.
func (p *parser) bounded(n *yaml.Node, depth int) bool {
	p.nodes++
	switch {
	case depth > maxDepth:
		p.errorf(n, "spec is nested more than %d levels deep", maxDepth)
		return false
	case p.nodes > maxNodes:
		p.errorf(n, "spec expands to more than %d YAML nodes (too many aliases?)", maxNodes)
		return false
	case n.Kind == yaml.AliasNode:
		return p.bounded(n.Alias, depth+1)
	}
	for _, c := range n.Content {
		if !p.bounded(c, depth+1) {
			return false
		}
	}
	return true
}

// mapping walks the keys of a mapping node, calling the handler for each
// known key and reporting unknown and duplicate keys.
func (p *parser) mapping(n *yaml.Node, handlers map[string]func(k, v *yaml.Node)) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "expected a mapping, found %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		if seen[k.Value] {
			p.errorf(k, "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		h, ok := handlers[k.Value]
		if !ok {
			known := make([]string, 0, len(handlers))
			for name := range handlers {
				known = append(known, name)
			}
			p.errorf(k, "unknown key %q%s", k.Value, suggest.DidYouMean(k.Value, known))
			continue
		}
		h(k, v)
	}
}

// each walks a mapping whose keys are names (states, events, ...),
// reporting duplicates.
func (p *parser) each(n *yaml.Node, fn func(k, v *yaml.Node)) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "expected a mapping of names, found %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "expected a name, found %s", kindName(k))
			continue
		}
		if seen[k.Value] {
			p.errorf(k, "duplicate name %q", k.Value)
			continue
		}
		seen[k.Value] = true
		fn(k, v)
	}
}

func (p *parser) str(n *yaml.Node) String {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, "expected a string, found %s", kindName(n))
		return String{Pos: p.pos(n)}
	}
	if n.Tag == "!!null" {
		return String{Pos: p.pos(n)}
	}
	return String{Value: n.Value, Pos: p.pos(n), Set: true}
}

func (p *parser) boolean(n *yaml.Node) Bool {
	n = resolve(n)
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		p.errorf(n, "expected true or false, found %s", kindName(n))
		return Bool{Pos: p.pos(n)}
	}
	return Bool{Value: b, Pos: p.pos(n), Set: true}
}

// names reads a name or a list of names.
func (p *parser) names(n *yaml.Node) []String {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode {
		return []String{p.str(n)}
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "expected a name or a list of names, found %s", kindName(n))
		return nil
	}
	out := make([]String, 0, len(n.Content))
	for _, c := range n.Content {
		out = append(out, p.str(c))
	}
	return out
}

func (p *parser) fields(n *yaml.Node) []Field {
	var out []Field
	p.each(n, func(k, v *yaml.Node) {
		f := Field{Name: p.str(k)}
		if v.Kind == yaml.MappingNode {
			p.mapping(v, p.fieldKeys(&f))
			if !f.Type.Set {
				p.errorf(v, "field %q has no type", k.Value)
			}
		} else {
			f.Type = p.str(v)
		}
		out = append(out, f)
	})
	return out
}

// fieldKeys returns the handlers of the keys of a field written as a
// mapping, filling f.
func (p *parser) fieldKeys(f *Field) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"type":         func(_, v *yaml.Node) { f.Type = p.str(v) },
		"doc":          func(_, v *yaml.Node) { f.Doc = p.str(v) },
		"renamed_from": func(_, v *yaml.Node) { f.RenamedFrom = p.names(v) },
		"go_name":      func(_, v *yaml.Node) { f.GoName = p.str(v) },
	}
}

func (p *parser) state(k, v *yaml.Node) State {
	s := State{Name: p.str(k)}
	if isEmpty(v) {
		return s
	}
	p.mapping(v, p.stateKeys(&s))
	return s
}

// stateKeys returns the handlers of the keys of a state, filling s.
func (p *parser) stateKeys(s *State) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"doc":          func(_, v *yaml.Node) { s.Doc = p.str(v) },
		"renamed_from": func(_, v *yaml.Node) { s.RenamedFrom = p.names(v) },
		"go_name":      func(_, v *yaml.Node) { s.GoName = p.str(v) },
		"initial":      func(_, v *yaml.Node) { s.Initial = p.boolean(v) },
		"terminal":     func(_, v *yaml.Node) { s.Terminal = p.boolean(v) },
		"transient":    func(_, v *yaml.Node) { s.Transient = p.boolean(v) },
		"history":      func(_, v *yaml.Node) { s.History = p.str(v) },
		"final":        func(_, v *yaml.Node) { s.Final = p.boolean(v) },
		"parallel":     func(_, v *yaml.Node) { s.Parallel = p.boolean(v) },
		"done":         func(k, v *yaml.Node) { s.Done = p.done(k, v) },
		"fields":       func(_, v *yaml.Node) { s.Fields = p.fields(v) },
		"ignore":       func(_, v *yaml.Node) { s.Ignore = p.names(v) },
		"reject": func(_, v *yaml.Node) {
			if resolve(v).Kind == yaml.MappingNode {
				// (reject: {Pay: "place the order first"})
				p.errorf(v, "expected a name or a list of names, found a mapping: a state's reject lists events; the reason for one goes on a row, {from: %s, on: EVENT, reject: \"reason\"}", s.Name.Value)
				return
			}
			s.Reject = p.names(v)
		},
		"defer": func(_, v *yaml.Node) { s.Defer = p.names(v) },
		"entry": func(_, v *yaml.Node) { s.Entry = p.hook(v) },
		"exit":  func(_, v *yaml.Node) { s.Exit = p.hook(v) },
		"after": func(_, v *yaml.Node) { s.After = p.afters(v) },
		"states": func(k, v *yaml.Node) {
			s.StatesPos = p.pos(k)
			p.each(v, func(k, v *yaml.Node) { s.States = append(s.States, p.state(k, v)) })
		},
	}
}

// hook reads an "entry" or "exit": an action, a list of actions, or a
// mapping with "effect" and "action".
func (p *parser) hook(v *yaml.Node) *Hook {
	h := &Hook{Pos: p.pos(v)}
	if v.Kind != yaml.MappingNode {
		h.Actions = p.names(v)
		return h
	}
	p.mapping(v, p.hookKeys(h))
	return h
}

// hookKeys returns the handlers of the keys of an "entry" or "exit"
// written as a mapping, filling h.
func (p *parser) hookKeys(h *Hook) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"effect": func(_, v *yaml.Node) { h.Effect = p.str(v) },
		"action": func(_, v *yaml.Node) { h.Actions = p.names(v) },
	}
}

// afters reads a state's "after": one timer, or a list of timers.
func (p *parser) afters(v *yaml.Node) []*After {
	v = resolve(v)
	if v.Kind != yaml.SequenceNode {
		return []*After{p.after(v)}
	}
	if len(v.Content) == 0 {
		p.errorf(v, "after is an empty list: give the state's timers, or remove the key")
		return nil
	}
	out := make([]*After, 0, len(v.Content))
	for _, c := range v.Content {
		out = append(out, p.after(resolve(c)))
	}
	return out
}

// after reads one timer of a state: its delay and the transition it
// fires, with or without guards.
func (p *parser) after(v *yaml.Node) *After {
	a := &After{Pos: p.pos(v)}
	p.mapping(v, p.afterKeys(a))
	if v.Kind == yaml.MappingNode && !a.Delay.Set {
		p.errorf(v, "after has no \"delay\": give a duration such as 30s, or the effect that computes one")
	}
	return a
}

// done reads a composite state's "done": the transition it takes when it
// completes, with or without guards.
func (p *parser) done(k, v *yaml.Node) *Done {
	d := &Done{Pos: p.pos(k)}
	keys := p.outcomeKeys(&d.Outcome)
	keys["guards"] = func(_, v *yaml.Node) { d.Guards = p.branches(v) }
	if v := resolve(v); v.Kind == yaml.ScalarNode && v.Value != "" {
		p.errorf(v, "done is a transition, not a state name: write done: {to: %s}", v.Value)
		return d
	}
	p.mapping(resolve(v), keys)
	return d
}

// afterKeys returns the handlers of the keys of "after", filling a.
func (p *parser) afterKeys(a *After) map[string]func(k, v *yaml.Node) {
	keys := p.outcomeKeys(&a.Outcome)
	keys["id"] = func(_, v *yaml.Node) { a.ID = p.str(v) }
	keys["delay"] = func(_, v *yaml.Node) { a.Delay = p.str(v) }
	keys["guards"] = func(_, v *yaml.Node) { a.Guards = p.branches(v) }
	return keys
}

func (p *parser) decl(k, v *yaml.Node) Decl {
	d := Decl{Name: p.str(k)}
	if isEmpty(v) {
		return d
	}
	p.mapping(v, p.declKeys(&d))
	return d
}

// action reads one entry of "actions": an event's keys, and "pure".
func (p *parser) action(k, v *yaml.Node) Decl {
	d := Decl{Name: p.str(k)}
	if isEmpty(v) {
		return d
	}
	p.mapping(v, p.actionKeys(&d))
	return d
}

// actionKeys returns the handlers of the keys of an action, filling d.
func (p *parser) actionKeys(d *Decl) map[string]func(k, v *yaml.Node) {
	keys := p.declKeys(d)
	keys["pure"] = func(_, v *yaml.Node) { d.Pure = p.boolean(v) }
	return keys
}

// declKeys returns the handlers of the keys of an event or an action,
// filling d.
func (p *parser) declKeys(d *Decl) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"doc":          func(_, v *yaml.Node) { d.Doc = p.str(v) },
		"fields":       func(_, v *yaml.Node) { d.Fields = p.fields(v) },
		"renamed_from": func(_, v *yaml.Node) { d.RenamedFrom = p.names(v) },
		"go_name":      func(_, v *yaml.Node) { d.GoName = p.str(v) },
	}
}

func (p *parser) fn(k, v *yaml.Node) Func {
	f := Func{Name: p.str(k)}
	if isEmpty(v) {
		return f
	}
	p.mapping(v, p.fnKeys(&f))
	return f
}

// fnKeys returns the handlers of the keys of a guard or an effect,
// filling f.
func (p *parser) fnKeys(f *Func) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"doc":     func(_, v *yaml.Node) { f.Doc = p.str(v) },
		"go_name": func(_, v *yaml.Node) { f.GoName = p.str(v) },
		"reads":   func(_, v *yaml.Node) { f.Reads = p.fields(v) },
		"sets": func(k, v *yaml.Node) {
			f.SetsPos = p.pos(k)
			f.Sets = p.fields(v)
		},
	}
}
