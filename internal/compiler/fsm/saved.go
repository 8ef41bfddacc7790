package fsm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// Break is a change the spec declares it makes on purpose, against an
// earlier revision (breaks:): fsmgen diff reports the change it names as
// declared instead of failing.
type Break struct {
	Change string // as fsmgen diff names it: "state Legacy", "field Paid.paid_at"
	Why    string
	Pos    diag.Pos
}

// renames checks the old names of the states, events, actions and fields
// (renamed_from): an old name must not be another's name now, nor be
// claimed by two, or saved data would load as either.
func (b *builder) renames() {
	for _, ks := range b.kindSets() {
		renameClashes(ks.what, ks.decls, nil, &b.diags)
		for _, d := range ks.decls {
			fields := map[string]*Field{}
			for _, f := range d.Fields {
				fields[f.JSONName] = f
			}
			for _, f := range d.Fields {
				for _, old := range f.RenamedFrom {
					if other := fields[SnakeName(old)]; other != nil && other != f {
						b.errorf(f.Pos, "field %s of %s %s was renamed from %s, which is the name of its field %s now: saved data would load as either", f.Name, ks.what, d.Name, old, other.Name)
					}
				}
			}
		}
	}
}

// renameClashes reports, among decls (each a what), an old name
// (renamed_from) that is another's name now, or that two claim: saved
// data of that name would load as either. A pair for which apart is
// false was reported already (by the build that holds both); nil apart
// reports every pair.
func renameClashes(what string, decls []*Decl, apart func(a, b *Decl) bool, diags *diag.List) {
	now := map[string]*Decl{}
	for _, d := range decls {
		now[d.Snake] = d
	}
	claimed := map[string]*Decl{}
	for _, d := range decls {
		for _, old := range d.RenamedFrom {
			snake := SnakeName(old)
			if other := now[snake]; other != nil && other != d && (apart == nil || apart(d, other)) {
				diags.Errorf(d.Pos, "%s %s was renamed from %s, which is the name of %s %s now (%s): saved data of that name would load as either; remove renamed_from, or rename the other", what, d.Name, old, what, other.Name, other.Pos)
			}
			if other := claimed[snake]; other != nil && other != d && (apart == nil || apart(d, other)) {
				diags.Errorf(d.Pos, "%s %s and %s %s (%s) were both renamed from %s: saved data of that name would load as either", what, d.Name, what, other.Name, other.Pos, old)
			}
			claimed[snake] = d
		}
	}
}

// regionRenames checks the old names of the states of a machine with
// parallel states across its builds (see renames, which each build runs
// on its own states): a state inside one region, and the states outside
// the regions or inside another, share one set of names in saved data.
func regionRenames(m *Machine, diags *diag.List) {
	build := map[*Decl]*Region{} // nil: the machine's own build
	var decls []*Decl
	add := func(s *State, r *Region) {
		if _, seen := build[&s.Decl]; !seen {
			build[&s.Decl] = r
			decls = append(decls, &s.Decl)
		}
	}
	for _, s := range slices.Concat(m.Composites, m.States) {
		add(s, nil)
	}
	for _, r := range m.Regions {
		add(r.Root, r)
		for _, s := range slices.Concat(r.Composites, r.Leaves) {
			add(s, r)
		}
	}
	renameClashes("state", decls, func(a, b *Decl) bool { return build[a] != build[b] }, diags)
}

// shape computes the fingerprint of what a saved machine holds: each
// leaf state's JSON kind, its fields' JSON names and types (their
// packages by import path, so that an import alias may change), and
// whether it has a timer, in a fixed order. Docs, rules and names in Go
// do not count: editing them leaves saved data as it was.
func (b *builder) shape() {
	var lines []string
	for _, s := range b.m.States {
		line := "state " + s.Snake
		var fields []string
		for _, f := range s.Fields {
			fields = append(fields, f.JSONName+" "+f.GoType.Canonical())
		}
		slices.Sort(fields)
		line += " {" + strings.Join(fields, "; ") + "}"
		for _, a := range s.Path() {
			for _, t := range a.Timers {
				line += " timer " + a.Snake
				if t.ID != "" {
					line += "." + t.ID
				}
			}
		}
		lines = append(lines, line)
	}
	lines = append(lines, b.par.shapeLines()...)
	for _, s := range b.m.Histories {
		// What a saved machine remembers of the state: a leaf inside it.
		lines = append(lines, "history "+s.Snake)
	}
	lines = append(lines, b.m.deferredShape()...)
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	b.m.Shape = "sha256:" + hex.EncodeToString(sum[:16])
}

// Canonical returns the code with its packages named by import path:
// "[]example.com/chat.Message".
func (c GoCode) Canonical() string {
	var sb strings.Builder
	for _, t := range c {
		if t.Ident != nil {
			fmt.Fprintf(&sb, "%s.%s", t.Ident.GoImportPath, t.Ident.GoName)
			continue
		}
		sb.WriteString(t.Text)
	}
	return sb.String()
}
