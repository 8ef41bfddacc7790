package spec

// The parsing of transitions, their outcomes and guard branches, and of
// examples.

import (
	"go.yaml.in/yaml/v4"
)

// outcomeKeys returns the handlers of the keys an outcome can have.
func (p *parser) outcomeKeys(o *Outcome) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"to":     func(_, v *yaml.Node) { o.To = p.str(v) },
		"effect": func(_, v *yaml.Node) { o.Effect = p.str(v) },
		"action": func(_, v *yaml.Node) { o.Actions = p.names(v) },
		"ignore": func(_, v *yaml.Node) { o.Ignore = p.boolean(v) },
		"reject": func(_, v *yaml.Node) {
			if r := resolve(v); r.Kind == yaml.ScalarNode && r.Tag == "!!bool" {
				p.errorf(v, "expected the reason the caller is told (reject: the cart is empty), found %s", r.Value)
				return
			}
			o.Reject = p.str(v)
		},
		"local": func(_, v *yaml.Node) { o.Local = p.boolean(v) },
		"set":   func(_, v *yaml.Node) { o.Set = p.constants(v) },
		"with": func(_, v *yaml.Node) {
			o.With = []Binding{}
			p.each(v, func(k, v *yaml.Node) { o.With = append(o.With, Binding{Name: p.str(k), Source: p.str(v)}) })
		},
		"examples": func(_, v *yaml.Node) {
			if v.Kind != yaml.SequenceNode {
				p.errorf(v, "examples must be a list, found %s", kindName(v))
				return
			}
			for _, c := range v.Content {
				o.Examples = append(o.Examples, p.example(resolve(c)))
			}
		},
	}
}

func (p *parser) transitions(n *yaml.Node, f *File) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "transitions must be a list, found %s", kindName(n))
		return
	}
	for _, c := range n.Content {
		c = resolve(c)
		t := Transition{Pos: p.pos(c)}
		p.mapping(c, p.transitionKeys(&t))
		if c.Kind == yaml.MappingNode && len(t.From) == 0 {
			p.errorf(c, "transition has no \"from\"")
		}
		f.Transitions = append(f.Transitions, t)
	}
}

// transitionKeys returns the handlers of the keys of a transition,
// filling t.
func (p *parser) transitionKeys(t *Transition) map[string]func(k, v *yaml.Node) {
	keys := p.outcomeKeys(&t.Outcome)
	keys["from"] = func(_, v *yaml.Node) { t.From = p.names(v) }
	keys["on"] = func(_, v *yaml.Node) {
		t.OnPos = p.pos(v)
		if t.On = p.names(v); len(t.On) == 0 && resolve(v).Kind == yaml.SequenceNode {
			p.errorf(v, "\"on\" lists no event: name the event, or the events, the row handles (leave \"on\" out for the eventless transitions of a transient state)")
		}
	}
	keys["guards"] = func(_, v *yaml.Node) { t.Guards = p.branches(v) }
	return keys
}

func (p *parser) branches(n *yaml.Node) []Branch {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "guards must be a list of branches, found %s", kindName(n))
		return nil
	}
	out := make([]Branch, 0, len(n.Content))
	for _, c := range n.Content {
		c = resolve(c)
		b := Branch{Pos: p.pos(c)}
		p.mapping(c, p.branchKeys(&b))
		out = append(out, b)
	}
	return out
}

// branchKeys returns the handlers of the keys of a guard branch, filling b.
func (p *parser) branchKeys(b *Branch) map[string]func(k, v *yaml.Node) {
	keys := p.outcomeKeys(&b.Outcome)
	keys["if"] = func(_, v *yaml.Node) { b.If = p.str(v) }
	keys["else"] = func(_, v *yaml.Node) { b.Else = p.boolean(v) }
	return keys
}

// example reads one example: its name, the state it starts in and the
// event it sends, with their fields' values.
func (p *parser) example(n *yaml.Node) Example {
	ex := Example{Pos: p.pos(n)}
	p.mapping(n, p.exampleKeys(&ex))
	if n.Kind == yaml.MappingNode && !ex.Name.Set {
		p.errorf(n, "example has no \"name\": say in a few words what the case is")
	}
	return ex
}

// exampleKeys returns the handlers of the keys of an example, filling ex.
func (p *parser) exampleKeys(ex *Example) map[string]func(k, v *yaml.Node) {
	return map[string]func(k, v *yaml.Node){
		"name":  func(_, v *yaml.Node) { ex.Name = p.str(v) },
		"in":    func(_, v *yaml.Node) { ex.In = p.str(v) },
		"send":  func(_, v *yaml.Node) { ex.Send = p.str(v) },
		"state": func(_, v *yaml.Node) { ex.State = p.values(v) },
		"event": func(_, v *yaml.Node) { ex.Event = p.values(v) },
	}
}

// values reads an example's field values, by spec name, as YAML gives them.
func (p *parser) values(v *yaml.Node) []Value {
	var out []Value
	p.each(v, func(k, v *yaml.Node) {
		val := Value{Name: p.str(k), Pos: p.pos(v)}
		if v.Kind == yaml.ScalarNode {
			val.Tag, val.Text = v.Tag, v.Value
		}
		if err := v.Decode(&val.Value); err != nil {
			p.errorf(v, "cannot read the value of %s: %v", k.Value, err)
			return
		}
		out = append(out, val)
	})
	return out
}

// constants reads the constants of "set": a mapping of field names to
// scalars (numbers, strings, booleans, durations written as strings).
func (p *parser) constants(v *yaml.Node) []Value {
	out := []Value{}
	p.each(v, func(k, v *yaml.Node) {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			p.errorf(v, "expected a constant for %s (a number, a string, true or false, a duration such as 90s), found %s", k.Value, kindName(v))
			return
		}
		val := Value{Name: p.str(k), Pos: p.pos(v), Tag: v.Tag, Text: v.Value}
		if err := v.Decode(&val.Value); err != nil {
			p.errorf(v, "cannot read the value of %s: %v", k.Value, err)
			return
		}
		out = append(out, val)
	})
	return out
}
