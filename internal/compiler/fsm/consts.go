package fsm

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// constants checks the rule's set: entries before the flow places them:
// neither the effect nor with: gives a name set: gives too. The flow
// places those that pass; the others are reported here.
func (fl *flow) constants() {
	r := fl.r
	o := fl.b.outcomeOf[r]
	if o == nil || len(o.Set) == 0 {
		return
	}
	fl.consts, fl.constOf = map[string]*spec.Value{}, map[string]*Const{}
	for i := range o.Set {
		c := &o.Set[i]
		name := c.Name.Value
		switch {
		case r.Effect != nil && r.Effect.Set(name) != nil:
			fl.b.errorf(c.Name.Pos, "set: %s is set by effect %s too on this row (%s): a field is set by the effect or by set:, not both; drop it from one of them", name, r.Effect.Name, r.Label)
		case fl.with[name] != nil:
			fl.b.errorf(c.Name.Pos, "set: %s is also taken from %s by with: on this row (%s): drop one of them", name, fl.with[name].found.desc, r.Label)
			fl.with[name].used = true
		default:
			fl.consts[name] = c
		}
	}
}

// constant returns the value set: gives field f of a state or an action
// (owner names it in messages, "state Idle"), checked against f's type.
// given is false when set: has no constant of f's name; v is nil when
// the constant does not fit, which is reported.
func (fl *flow) constant(f *Field, owner string) (v *Value, given bool) {
	c := fl.consts[f.Name]
	if c == nil {
		return nil, false
	}
	fl.taken[constKey(f.Name)] = true
	k := fl.b.constFor(c, f, owner)
	if k == nil {
		return nil, true
	}
	if fl.constOf[f.Name] == nil {
		fl.constOf[f.Name] = k
	}
	return &Value{Source: FromConst, Const: k}, true
}

// updateConsts stores the constants of set: of a rule that stays in the
// source state's fields of their names; every state the rule reads from
// must have the field.
func (fl *flow) updateConsts() {
	r := fl.r
	o := fl.b.outcomeOf[r]
	if fl.consts == nil {
		return
	}
	for _, c := range o.Set {
		name := c.Name.Value
		if fl.consts[name] == nil {
			continue
		}
		var have []*Field
		for _, s := range fl.from {
			if f := s.Field(name); f != nil {
				have = append(have, f)
			}
		}
		switch {
		case len(have) == 0:
			continue // an action may take it
		case len(have) < len(fl.from):
			fl.taken[constKey(name)] = true
			fl.b.errorf(c.Name.Pos, "set: %s, but only some of %s have it (%s): give them all the field, or write rows of their own", name, fl.shared(), r.Label)
			continue
		}
		for i, f := range have {
			if v, _ := fl.constant(f, "state "+fl.from[i].Name); v != nil && !fl.written[f.Data] {
				fl.store(f.Data, *v)
			}
		}
	}
}

// constKey marks, among the flow's taken names (which are Go
// identifiers), that a constant of set: was given to a field.
func constKey(name string) string { return "set " + name }

// unplaced reports the constants of set: that no field on the row took,
// and lists those it did in the rule, in spec order.
func (fl *flow) unplaced() {
	r := fl.r
	o := fl.b.outcomeOf[r]
	if o == nil || fl.consts == nil {
		return
	}
	for _, c := range o.Set {
		if k := fl.constOf[c.Name.Value]; k != nil {
			r.Consts = append(r.Consts, k)
		}
	}
	r.Label = RuleLabel(r) // now with its constants
	for _, c := range o.Set {
		name := c.Name.Value
		if fl.constOf[name] != nil || fl.consts[name] == nil || fl.taken[constKey(name)] {
			continue // reported
		}
		var takers [][]*Field
		var parts []string
		switch {
		case r.To != nil:
			takers = append(takers, r.To.Fields)
			parts = append(parts, "state "+r.To.Name)
		case !r.Shared():
			takers = append(takers, r.From.Fields)
			parts = append(parts, "state "+r.From.Name)
		default:
			for _, s := range fl.from {
				takers = append(takers, s.Fields)
			}
			parts = append(parts, fl.shared())
		}
		for _, e := range r.Actions {
			takers = append(takers, e.Action.Fields)
			parts = append(parts, "action "+e.Action.Name)
		}
		fl.b.errorf(c.Name.Pos, "set: %s, but nothing on this row (%s) takes it: %s has no field %s%s; drop it, or name a field the row fills", name, r.Label, joinOr(parts), name, didYouMean(name, nil, takers...))
	}
}

// constFor checks a constant of set: against the type of field f, which
// it fills, and returns it as the generated code writes it; nil when it
// does not fit, which is reported. A type fsmgen does not know (one of
// the output package, or of a package not loaded) takes any scalar,
// written as the spec writes it, and the Go compiler checks it.
func (b *builder) constFor(c *spec.Value, f *Field, owner string) *Const {
	k := &Const{Name: c.Name.Value, Text: c.Text, Pos: c.Pos}
	what := fmt.Sprintf("%s's %s is %s", owner, f.Name, f.Type)
	if isDuration(f.GoType) {
		d, err := time.ParseDuration(c.Text)
		if err != nil {
			b.errorf(c.Pos, "set: %s: %s, and %s is not a duration: write one such as 90s or 1m30s", k.Name, what, c.Text)
			return nil
		}
		k.Duration, k.Nanos = true, int64(d)
		return k
	}
	t, canBe := b.constType(f)
	var basic *types.Basic
	if t != nil {
		basic, _ = t.Underlying().(*types.Basic)
	}
	if !canBe || (t != nil && (basic == nil || basic.Info()&(types.IsBoolean|types.IsString|types.IsNumeric) == 0)) {
		b.errorf(c.Pos, "set: %s: %s, which no constant can be: set takes fields of bool, string and number types, and time.Duration; name an effect that sets it", k.Name, what)
		return nil
	}
	lit, problem := literal(c)
	if problem == "" && basic != nil {
		problem = fits(c, basic.Info())
	}
	if problem != "" {
		b.errorf(c.Pos, "set: %s: %s, and %s", k.Name, what, problem)
		return nil
	}
	k.Go = lit
	if t != nil {
		if err := checkConst(t, lit); err != "" {
			b.errorf(c.Pos, "set: %s: %s, which cannot hold %s (%s)", k.Name, what, c.Text, err)
			return nil
		}
	}
	return k
}

// literal writes a scalar of the spec as a Go literal, or says why it
// cannot be one.
func literal(c *spec.Value) (lit, problem string) {
	switch c.Tag {
	case "!!str":
		s, _ := c.Value.(string)
		return strconv.Quote(s), ""
	case "!!bool":
		return strconv.FormatBool(c.Value == true), ""
	case "!!int":
		return fmt.Sprint(c.Value), ""
	case "!!float":
		f, _ := c.Value.(float64)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return "", c.Text + " is not a finite number"
		}
		return strconv.FormatFloat(f, 'g', -1, 64), ""
	}
	return "", fmt.Sprintf("%s is not a number, a string, true or false (YAML reads it as %s): quote it for a string", c.Text, strings.TrimPrefix(c.Tag, "!!"))
}

// fits says why a scalar is not of the kind of a basic type, or "". A
// string given for a number or a boolean is most often an expression
// ("count + 1"), which set does not evaluate: the reason says where a
// computed value goes.
func fits(c *spec.Value, info types.BasicInfo) string {
	var problem string
	switch {
	case info&types.IsBoolean != 0 && c.Tag != "!!bool":
		problem = c.Text + " is not true or false"
	case info&types.IsString != 0 && c.Tag != "!!str":
		return fmt.Sprintf("%s is not a string: quote it (%q)", c.Text, c.Text)
	case info&types.IsNumeric != 0 && c.Tag != "!!int" && c.Tag != "!!float":
		problem = c.Text + " is not a number"
	default:
		return ""
	}
	if c.Tag == "!!str" {
		problem += ": set writes constants only; compute the value in an effect (effect: NAME), which sets the field"
	}
	return problem
}

// checkConst type-checks a literal as a value of type t, as Go assigns a
// constant, and returns why it does not fit (it overflows, or is
// truncated), or "".
func checkConst(t types.Type, lit string) string {
	pkg := types.NewPackage("fsmgen/constants", "constants")
	pkg.Scope().Insert(types.NewTypeName(token.NoPos, pkg, "fsmgenT", t))
	expr, err := parser.ParseExpr("[]fsmgenT{" + lit + "}")
	if err != nil {
		return err.Error()
	}
	if err := types.CheckExpr(token.NewFileSet(), pkg, token.NoPos, expr, nil); err != nil {
		msg := err.Error()
		if te, ok := err.(types.Error); ok {
			msg = te.Msg
		}
		if i := strings.LastIndex(msg, " ("); i >= 0 && strings.HasSuffix(msg, ")") {
			return msg[i+2 : len(msg)-1] // "overflows", "truncated"
		}
		return msg
	}
	return ""
}

// isDuration reports whether a type is time.Duration.
func isDuration(c GoCode) bool {
	return len(c) == 1 && c[0].Ident != nil && *c[0].Ident == GoIdent{GoName: "Duration", GoImportPath: "time"}
}

// constType returns the type of field f as far as fsmgen knows it, for
// checking constants: nil when it does not know it (a type of the output
// package, or of a package not loaded). canBe is false when the type
// cannot hold a constant whatever it is: a pointer, slice, map, array, or
// a type of the generated package.
func (b *builder) constType(f *Field) (t types.Type, canBe bool) {
	expr, err := parser.ParseExpr(f.Type)
	if err != nil {
		return nil, false
	}
	switch e := expr.(type) {
	case *ast.Ident:
		if tn, ok := types.Universe.Lookup(e.Name).(*types.TypeName); ok {
			return tn.Type(), true
		}
		if slices.Contains(b.env.LocalTypes, e.Name) {
			return nil, true
		}
		return nil, false // a state, event or action, or a type fsmgen generates
	case *ast.SelectorExpr:
		id, _ := e.X.(*ast.Ident)
		if id == nil || b.imports[id.Name] == nil {
			return nil, false
		}
		pkg := b.pkgs[b.imports[id.Name].Path.Value]
		if pkg == nil {
			return nil, true
		}
		if tn, ok := pkg.Scope().Lookup(e.Sel.Name).(*types.TypeName); ok {
			return tn.Type(), true
		}
		return nil, true
	}
	return nil, false
}
