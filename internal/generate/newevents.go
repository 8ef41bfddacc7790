package generate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"

	"github.com/fsmgen/fsmgen/internal/diag"
	"github.com/fsmgen/fsmgen/internal/fsm"
)

// newEvents warns about the events a state resolves through "ignore: *" or
// "reject: *" that are new: absent from the Go code generated last time.
// "*" saves listing every event by hand, but an event added later should
// still get a decision, so the first generation after adding it says
// which states take it that way (an error under -werror, which keeps the
// old code until the spec decides).
func newEvents(m *fsm.Machine, outputs []Output, diags *diag.List) {
	var others []*fsm.Rule
	for _, r := range m.Rules {
		if r.Others {
			others = append(others, r)
		}
	}
	if len(others) == 0 {
		return
	}
	var goFile string
	for _, o := range outputs {
		if strings.HasSuffix(o.Path, "_gen.go") {
			goFile = o.Path
		}
	}
	known, ok := generatedEvents(goFile)
	if !ok {
		return // never generated: every event is new, and none is news
	}
	for _, r := range others {
		if known[r.Event.KindName] {
			continue
		}
		diags.Warnf(r.Pos, "state %s %ss the new event %s through \"*\": if that is wrong, give %s a rule for %s; if it is right, regenerate to accept it (the warning stays until then)", r.From.Name, r.Kind, r.Event.Name, r.From.Name, r.Event.Name)
	}
}

// generatedEvents returns the event kind constants declared by the Go file
// fsmgen generated at path; false when there is none to read.
func generatedEvents(path string) (map[string]bool, bool) {
	src, err := os.ReadFile(path)
	if err != nil || !generated(src) {
		return nil, false
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST || len(gd.Specs) == 0 {
			continue
		}
		first, ok := gd.Specs[0].(*ast.ValueSpec)
		if !ok {
			continue
		}
		if id, ok := first.Type.(*ast.Ident); !ok || id.Name != "EventKind" {
			continue
		}
		for _, s := range gd.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				out[n.Name] = true
			}
		}
	}
	return out, true
}
