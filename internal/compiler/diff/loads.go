package diff

import (
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/prose"
)

// What loads: a field retyped between two revisions keeps the data saved
// with it when the JSON its old type wrote reads as its new type. The
// members of a saved state, event or action are read strictly (runtime
// fsmrt), and each member's value with encoding/json, which decides:
//
//   - a number reads as a number type whose range holds it: every value of
//     a narrower integer, or of an unsigned one into a wider signed one,
//     or of float32 into float64, loads (ok); a wider one, a negative one
//     into an unsigned type, one with a fraction into an integer does not
//     (breaks). An integer reads as a float, exactly up to 2^24 (float32)
//     or 2^53 (float64): int32 into float64 is ok, int64 into float64 is
//     to review (a value past 2^53 is rounded);
//   - a named type without an encoding of its own is its underlying type:
//     string and a named string read each other (ok);
//   - a type that encodes itself (a JSON or text marshaler) reads what its
//     code reads, which fsmgen does not see: only the same type is known
//     to load; one of the same name moved to another package, with the
//     same underlying type, is to review; anything else breaks;
//   - beneath a state's own members, encoding/json reads structs
//     leniently: a member the new type adds loads as its zero value (ok),
//     a member it no longer has is dropped with its value (review), a
//     member matches in any case;
//   - a pointer reads the JSON of its element, and null: a value loads
//     into a pointer (ok), a pointer into a value with a nil one becoming
//     the zero value (review);
//   - slices, arrays and maps load when their elements (and keys) do; an
//     array drops the elements past its length (review).
//
// Breaks means some saved value does not load, or loads as another value;
// review that every saved value loads but something may be lost, or
// depends on code fsmgen does not see.

// loads decides whether JSON written for shape old reads as shape new. It
// returns the verdict for the saved data and why, as a clause that follows
// "which loads as NEW:" (ok, review) or "which may not load as NEW:"
// (breaks).
func loads(old, new *fsm.Shape) (Verdict, string) {
	l := &loader{assumed: map[[2]*fsm.Shape]bool{}}
	r := l.load(old, new)
	if r.why == "" {
		r.why = "their JSON is alike"
	}
	return r.v, r.why
}

type loader struct {
	// assumed are the pairs being compared, which a recursive type meets
	// again: they load unless something else says otherwise.
	assumed map[[2]*fsm.Shape]bool
}

// result is a verdict and why.
type result struct {
	v   Verdict
	why string
}

var same = result{} // loads as it was saved

// severity orders the verdicts: ok, review, breaks.
func severity(v Verdict) int { return [...]int{OK: 0, Review: 1, Breaks: 2}[v] }

// worst returns the more severe of a and b; of two alike, their reasons
// joined.
func worst(a, b result) result {
	switch {
	case severity(b.v) > severity(a.v):
		return b
	case severity(a.v) > severity(b.v) || b.why == "":
		return a
	case a.why == "":
		return b
	}
	return result{a.v, a.why + "; " + b.why}
}

// within prefixes the reason of r with where the value lies.
func within(where string, r result) result {
	if r.why != "" {
		r.why = where + ": " + r.why
	}
	return r
}

func (l *loader) load(o, n *fsm.Shape) result {
	pair := [2]*fsm.Shape{o, n}
	if l.assumed[pair] {
		return same
	}
	l.assumed[pair] = true
	defer delete(l.assumed, pair)
	switch {
	case n.Kind == fsm.ShapePointer:
		if o.Kind == fsm.ShapePointer {
			return l.load(o.Elem, n.Elem)
		}
		return l.load(o, n.Elem)
	case o.Kind == fsm.ShapePointer:
		r := l.load(o.Elem, n)
		return worst(r, result{Review, fmt.Sprintf("a nil %s loads as the zero %s: check that nil meant nothing more", o.Type, n.Type)})
	case o.Custom || n.Custom:
		return custom(o, n)
	case o.String() == n.String():
		return same
	case n.Kind == fsm.ShapeInterface:
		if !n.Empty() {
			return result{Breaks, fmt.Sprintf("only null loads into the interface %s", n.Type)}
		}
		return result{Review, fmt.Sprintf("it loads as plain JSON values (maps, slices, float64s, strings), not as %s values: check the code that reads it", o.Type)}
	case o.Kind == fsm.ShapeInterface:
		return result{Breaks, fmt.Sprintf("whatever was saved in %s may not be %s %s", o.Type, prose.Article(n.Type), n.Type)}
	}
	switch n.Kind {
	case fsm.ShapeInt, fsm.ShapeUint, fsm.ShapeFloat:
		return numbers(o, n)
	case fsm.ShapeBool, fsm.ShapeString:
		if o.Kind == n.Kind {
			return result{OK, fmt.Sprintf("both are JSON %ss", jsonKind(n))}
		}
	case fsm.ShapeQuoted:
		if o.Kind == fsm.ShapeQuoted {
			return l.load(o.Elem, n.Elem)
		}
	case fsm.ShapeSlice, fsm.ShapeArray:
		return l.list(o, n)
	case fsm.ShapeMap:
		if o.Kind == fsm.ShapeMap {
			return worst(within("its keys", mapKeys(o.Key, n.Key)), within("its values", l.load(o.Elem, n.Elem)))
		}
	case fsm.ShapeStruct:
		if o.Kind == fsm.ShapeStruct {
			return l.members(o, n)
		}
	}
	if o.Kind == fsm.ShapeBytes && n.Kind == fsm.ShapeString {
		return result{Breaks, "it loads as its base64 text, not as the bytes"}
	}
	return result{Breaks, fmt.Sprintf("a JSON %s does not load as %s", jsonKind(o), n.Type)}
}

// numbers decides whether a number of shape o reads as one of shape n.
func numbers(o, n *fsm.Shape) result {
	switch {
	case o.Kind == fsm.ShapeQuoted:
		return result{Breaks, fmt.Sprintf("%s was saved as a quoted string (\",string\"), and %s reads a number", o.Type, n.Type)}
	case o.Kind != fsm.ShapeInt && o.Kind != fsm.ShapeUint && o.Kind != fsm.ShapeFloat:
		return result{Breaks, fmt.Sprintf("a JSON %s does not load as %s", jsonKind(o), n.Type)}
	case o.Kind == n.Kind && o.Bits <= n.Bits, o.Kind == fsm.ShapeUint && n.Kind == fsm.ShapeInt && o.Bits < n.Bits:
		return result{OK, fmt.Sprintf("every %s fits in %s", o.Type, n.Type)}
	case o.Kind == fsm.ShapeFloat && n.Kind == fsm.ShapeFloat:
		return result{Breaks, fmt.Sprintf("%s %s beyond the range of %s does not load, and others are rounded", prose.Article(o.Type), o.Type, n.Type)}
	case o.Kind == fsm.ShapeFloat:
		return result{Breaks, fmt.Sprintf("a number with a fraction does not load as %s", n.Type)}
	case n.Kind == fsm.ShapeFloat:
		mantissa := 53
		if n.Bits == 32 {
			mantissa = 24
		}
		magnitude := o.Bits // the bits of the largest magnitude: 2^(Bits-1) for a signed integer
		if o.Kind == fsm.ShapeInt {
			magnitude--
		}
		if magnitude <= mantissa {
			return result{OK, fmt.Sprintf("every %s is exact in %s", o.Type, n.Type)}
		}
		return result{Review, fmt.Sprintf("one beyond 2^%d (%d) is rounded: check that no saved value is that large, or keep the type", mantissa, uint64(1)<<mantissa)}
	case o.Kind == fsm.ShapeInt && n.Kind == fsm.ShapeUint:
		return result{Breaks, fmt.Sprintf("a negative %s does not load as %s", o.Type, n.Type)}
	}
	return result{Breaks, fmt.Sprintf("%s %s beyond the range of %s does not load", prose.Article(o.Type), o.Type, n.Type)}
}

// mapKeys decides whether a map key of shape o reads as one of shape n:
// JSON holds keys as strings, numbers written in decimal.
func mapKeys(o, n *fsm.Shape) result {
	switch {
	case o.Custom || n.Custom:
		return custom(o, n)
	case n.Kind == fsm.ShapeString && o.Kind == fsm.ShapeString:
		return same
	case n.Kind == fsm.ShapeString && (o.Kind == fsm.ShapeInt || o.Kind == fsm.ShapeUint):
		return result{OK, fmt.Sprintf("JSON holds %s %s key as its decimal text, which loads as %s", prose.Article(o.Type), o.Type, n.Type)}
	case n.Kind == fsm.ShapeInt || n.Kind == fsm.ShapeUint:
		return numbers(o, n)
	}
	return result{Breaks, fmt.Sprintf("a key of %s does not load as %s", o.Type, n.Type)}
}

// list decides whether a slice or an array of shape o reads as one of
// shape n.
func (l *loader) list(o, n *fsm.Shape) result {
	if o.Kind != fsm.ShapeSlice && o.Kind != fsm.ShapeArray {
		return result{Breaks, fmt.Sprintf("a JSON %s does not load as %s", jsonKind(o), n.Type)}
	}
	r := within("its elements", l.load(o.Elem, n.Elem))
	if n.Kind == fsm.ShapeArray && (o.Kind == fsm.ShapeSlice || o.Len > n.Len) {
		r = worst(r, result{Review, fmt.Sprintf("the elements of a %s past the first %d are dropped: check that none was saved with more", o.Type, n.Len)})
	}
	return r
}

// members decides whether a struct of shape o reads as one of shape n, as
// encoding/json reads it beneath a saved state's own members: a member
// matches by its name, in any case; a member n lacks is dropped.
func (l *loader) members(o, n *fsm.Shape) result {
	r := same
	var added, dropped, recased []string
	for _, om := range o.Members {
		nm := n.Member(om.Name)
		if nm == nil {
			for i := range n.Members {
				if strings.EqualFold(n.Members[i].Name, om.Name) {
					nm = &n.Members[i]
					break
				}
			}
		}
		if nm == nil {
			dropped = append(dropped, om.Name)
			continue
		}
		if nm.Name != om.Name {
			recased = append(recased, om.Name+" loads into "+nm.Name)
		}
		r = worst(r, within("member "+om.Name, l.load(om.Shape, nm.Shape)))
	}
	for _, nm := range n.Members {
		if o.Member(nm.Name) == nil && !containsFold(o.Members, nm.Name) {
			added = append(added, nm.Name)
		}
	}
	if len(dropped) > 0 {
		r = worst(r, result{Review, fmt.Sprintf("%s has no member %s: the values saved in it are dropped (keep the member, or check that they may go)", n.Type, strings.Join(dropped, ", "))})
	}
	if len(recased) > 0 {
		r = worst(r, result{OK, fmt.Sprintf("encoding/json matches members in any case: %s", strings.Join(recased, ", "))})
	}
	if len(added) > 0 {
		r = worst(r, result{OK, fmt.Sprintf("the members %s adds (%s) load as their zero values", n.Type, strings.Join(added, ", "))})
	}
	return r
}

// containsFold reports whether a member's name is name in some case.
func containsFold(members []fsm.Member, name string) bool {
	for _, m := range members {
		if strings.EqualFold(m.Name, name) {
			return true
		}
	}
	return false
}

// custom decides for shapes of which one at least encodes itself: only
// the same type is known to read what it wrote.
func custom(o, n *fsm.Shape) result {
	switch {
	case !o.Custom:
		return result{Breaks, fmt.Sprintf("%s reads its own JSON, in code fsmgen does not see, which may not read what %s wrote", n.Type, o.Type)}
	case !n.Custom:
		return result{Breaks, fmt.Sprintf("%s wrote its own JSON, which %s may not read", o.Type, n.Type)}
	case o.Name != n.Name:
		return result{Breaks, fmt.Sprintf("%s and %s each read their own JSON", o.Type, n.Type)}
	case o.Pkg == n.Pkg && o.String() == n.String():
		return same
	case o.Pkg == n.Pkg:
		return result{Review, fmt.Sprintf("%s reads its own JSON, and its type changed: check that it reads what it wrote before", n.Type)}
	}
	return result{Review, fmt.Sprintf("%s (%s) reads its own JSON, as %s (%s) did, in code fsmgen does not see: check that it reads what the old one wrote", n.Type, n.Pkg, o.Type, o.Pkg)}
}

// jsonKind names what JSON holds a value of shape s as.
func jsonKind(s *fsm.Shape) string {
	switch s.Kind {
	case fsm.ShapeBool:
		return "boolean"
	case fsm.ShapeInt, fsm.ShapeUint, fsm.ShapeFloat:
		return "number"
	case fsm.ShapeString, fsm.ShapeBytes, fsm.ShapeQuoted:
		return "string"
	case fsm.ShapeSlice, fsm.ShapeArray:
		return "array"
	case fsm.ShapeMap, fsm.ShapeStruct:
		return "object"
	case fsm.ShapePointer:
		return jsonKind(s.Elem)
	}
	return "value of " + s.Type
}
