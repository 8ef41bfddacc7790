package generate_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// retypeTypes are the hand-written types the retyped fields use.
const retypeTypes = `package types

import (
	"fmt"
	"strings"
)

type Name string
type Cents int64

type LimitsV1 struct {
	Max int32
	Min int32 ` + "`json:\"min\"`" + `
}
type LimitsWider struct {
	Max  int64
	Min  int32 ` + "`json:\"min\"`" + `
	Step int
}
type LimitsFewer struct{ Max int32 }
type LimitsNarrower struct {
	Max int16
	Min int32 ` + "`json:\"min\"`" + `
}

type Tree struct {
	N    int32
	Kids []Tree
}
type TreeWider struct {
	N    int64
	Kids []TreeWider
}

type Quoted struct {
	N int32 ` + "`json:\",string\"`" + `
}
type QuotedWider struct {
	N int64 ` + "`json:\",string\"`" + `
}

// Stamp writes and reads itself as "stamp:N".
type Stamp struct{ N int }

func (s Stamp) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("stamp:%d", s.N)), nil }

func (s *Stamp) UnmarshalText(b []byte) error {
	n, ok := strings.CutPrefix(string(b), "stamp:")
	if !ok {
		return fmt.Errorf("not a stamp: %q", b)
	}
	_, err := fmt.Sscan(n, &s.N)
	return err
}

func Ptr[T any](v T) *T { return &v }
`

// retypeMoved is Stamp moved to another package, its code unchanged.
const retypeMoved = `package moved

import (
	"fmt"
	"strings"
)

// Stamp writes and reads itself as "stamp:N".
type Stamp struct{ N int }

func (s Stamp) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("stamp:%d", s.N)), nil }

func (s *Stamp) UnmarshalText(b []byte) error {
	n, ok := strings.CutPrefix(string(b), "stamp:")
	if !ok {
		return fmt.Errorf("not a stamp: %q", b)
	}
	_, err := fmt.Sscan(n, &s.N)
	return err
}
`

// retype is a field retyped between two revisions: its type in each, the
// values saved with the old one (Go expressions of the old type), and
// the verdict fsmgen diff must give the data saved with it.
type retype struct {
	old, new string
	samples  []string
	want     diff.Verdict
}

var retypes = []retype{
	// Widenings: every value loads, unchanged.
	{"int32", "int64", []string{"math.MaxInt32", "math.MinInt32"}, diff.OK},
	{"int", "int64", []string{"math.MaxInt64", "math.MinInt64"}, diff.OK},
	{"uint32", "int64", []string{"math.MaxUint32"}, diff.OK},
	{"int8", "int16", []string{"math.MinInt8"}, diff.OK},
	{"float32", "float64", []string{"0.1", "math.MaxFloat32", "-1.5e-7"}, diff.OK},
	{"int32", "float64", []string{"math.MaxInt32", "math.MinInt32"}, diff.OK},
	{"string", "types.Name", []string{`"x"`, `""`}, diff.OK},
	{"types.Name", "string", []string{`"x"`}, diff.OK},
	{"int", "types.Cents", []string{"-42"}, diff.OK},
	{"int", "*int64", []string{"7"}, diff.OK},
	{"[]int32", "[]int64", []string{"[]int32{1, math.MaxInt32}", "nil"}, diff.OK},
	{"map[string]int32", "map[string]int64", []string{"map[string]int32{\"a\": math.MinInt32}"}, diff.OK},
	{"map[int32]string", "map[string]string", []string{"map[int32]string{-5: \"a\"}"}, diff.OK},
	{"types.LimitsV1", "types.LimitsWider", []string{"types.LimitsV1{Max: math.MaxInt32, Min: -1}"}, diff.OK},
	{"types.Tree", "types.TreeWider", []string{"types.Tree{N: 1, Kids: []types.Tree{{N: math.MaxInt32}}}"}, diff.OK},
	{"types.Quoted", "types.QuotedWider", []string{"types.Quoted{N: math.MinInt32}"}, diff.OK},
	// Everything loads, but something may be lost.
	{"int64", "float64", []string{"1<<53 + 1"}, diff.Review},
	{"*int", "int", []string{"nil", "types.Ptr(3)"}, diff.Review},
	{"types.LimitsV1", "types.LimitsFewer", []string{"types.LimitsV1{Max: 1, Min: 2}"}, diff.Review},
	{"[]int32", "[2]int32", []string{"[]int32{1, 2, 3}"}, diff.Review},
	{"int32", "any", []string{"5"}, diff.Review},
	{"types.Stamp", "moved.Stamp", []string{"types.Stamp{N: 4}"}, diff.Review},
	// Narrowings and other kinds: some value does not load.
	{"int64", "int32", []string{"5", "math.MaxInt64"}, diff.Breaks},
	{"uint", "int", []string{"math.MaxUint64"}, diff.Breaks},
	{"uint32", "int32", []string{"math.MaxUint32"}, diff.Breaks},
	{"int", "uint", []string{"-1"}, diff.Breaks},
	{"float64", "float32", []string{"1e300"}, diff.Breaks},
	{"float64", "int", []string{"1.5"}, diff.Breaks},
	{"int32", "string", []string{"1"}, diff.Breaks},
	{"bool", "string", []string{"true"}, diff.Breaks},
	{"[]int64", "[]int32", []string{"[]int64{math.MaxInt64}"}, diff.Breaks},
	{"types.LimitsV1", "types.LimitsNarrower", []string{"types.LimitsV1{Max: math.MaxInt32}"}, diff.Breaks},
	{"types.Quoted", "int32", []string{"types.Quoted{N: 1}"}, diff.Breaks},
	{"string", "types.Stamp", []string{`"stamp:1"`, `"today"`}, diff.Breaks},
	{"any", "int32", []string{`"x"`}, diff.Breaks},
}

// retypeSpec is a revision of a machine with, for each retype, a state
// Ci and an event Goi with a field v of the retype's type in that
// revision (old or new).
func retypeSpec(pkg string, old bool) string {
	var states, events, rows strings.Builder
	for i, r := range retypes {
		typ := r.new
		if old {
			typ = r.old
		}
		fmt.Fprintf(&states, "  C%d:\n    terminal: true\n    reject: \"*\"\n    fields:\n      v: {type: %q}\n", i, typ)
		fmt.Fprintf(&events, "  Go%d:\n    fields:\n      v: {type: %q}\n", i, typ)
		fmt.Fprintf(&rows, "  - from: Start\n    on: Go%d\n    to: C%d\n", i, i)
	}
	return "version: 2\nmachine: Box\npackage: " + pkg + "\nimports:\n  types: example.com/m/types\n  moved: example.com/m/moved\noutput:\n  go: .\n" +
		"states:\n  Start:\n    initial: true\n" + states.String() + "events:\n" + events.String() + "transitions:\n" + rows.String()
}

// retypeMain saves each sample with the old revision (a machine in state
// Ci, and an event Goi of an event log) and loads it with the new one,
// printing for each "state|event I J ok BEFORE AFTER" or "state|event I
// J err MESSAGE".
func retypeMain() string {
	var b strings.Builder
	b.WriteString(`package main

import (
	"encoding/json"
	"fmt"
	"math"

	"example.com/m/after"
	"example.com/m/before"
	"example.com/m/moved"
	"example.com/m/types"
)

var (
	_ = math.Pi
	_ moved.Stamp
	_ types.Name
)

func report(what string, i, j int, saved any, loaded any, err error) {
	if err != nil {
		fmt.Printf("%s %d %d err %q\n", what, i, j, err.Error())
		return
	}
	b, err := json.Marshal(saved)
	check(err)
	a, err := json.Marshal(loaded)
	check(err)
	fmt.Printf("%s %d %d ok %s %s\n", what, i, j, b, a)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
`)
	for i, r := range retypes {
		for j, sample := range r.samples {
			fmt.Fprintf(&b, `	{
		m, err := before.Restore(before.Config{}, before.C%[1]d{V: %[3]s})
		check(err)
		data, err := m.Save()
		check(err)
		n, err := after.Load(after.Config{}, data)
		var loaded any
		if n != nil {
			loaded = n.State()
		}
		report("state", %[1]d, %[2]d, m.State(), loaded, err)
		ev := &before.Go%[1]d{V: %[3]s}
		data, err = json.Marshal(ev)
		check(err)
		e, err := after.UnmarshalEvent(data)
		report("event", %[1]d, %[2]d, ev, e, err)
	}
`, i, j, sample)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// TestRetypeLoads checks fsmgen diff's verdict on saved data against what
// really happens: for each retype of a field of a state and of an event,
// values saved with the old revision's generated package are loaded with
// the new one's. ok must mean that every value loads unchanged, review
// that every value loads, and breaks that some value does not load, or
// loads as another value.
func TestRetypeLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	for path, src := range map[string]string{"types/types.go": retypeTypes, "moved/moved.go": retypeMoved} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, path), []byte(src), 0o644))
	}
	machines := map[string]*fsm.Machine{}
	for pkg, old := range map[string]bool{"before": true, "after": false} {
		spec := filepath.Join(dir, pkg, "box.yaml")
		require.NoError(t, os.MkdirAll(filepath.Dir(spec), 0o755))
		require.NoError(t, os.WriteFile(spec, []byte(retypeSpec(pkg, old)), 0o644))
		res, err := generate.Load(spec)
		require.NoError(t, err)
		require.NotNil(t, res.Machine, "%s: %s", pkg, res.Diags)
		_, err = generate.Write(res.Outputs)
		require.NoError(t, err)
		machines[pkg] = res.Machine
	}
	report := diff.Compare(machines["before"], machines["after"])
	verdicts := map[string]*diff.Change{}
	for _, c := range report.Changes {
		verdicts[c.Subject] = c
	}

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "retype"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "retype", "main.go"), []byte(retypeMain()), 0o644))
	out := goIn(t, dir, "run", "./cmd/retype")

	type outcome struct{ failed, changed []string }
	outcomes := map[string]*outcome{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 5)
		require.Len(t, f, 5, "a line of the program's output: %q", sc.Text())
		i, err := strconv.Atoi(f[1])
		require.NoError(t, err)
		key := f[0] + " " + f[1]
		if outcomes[key] == nil {
			outcomes[key] = &outcome{}
		}
		o, sample := outcomes[key], retypes[i].samples[must(strconv.Atoi(f[2]))]
		switch f[3] {
		case "err":
			o.failed = append(o.failed, sample+": "+f[4])
		case "ok":
			saved, loaded, _ := strings.Cut(f[4], " ")
			if !sameJSON(t, saved, loaded) {
				o.changed = append(o.changed, fmt.Sprintf("%s: saved %s, loaded %s", sample, saved, loaded))
			}
		}
	}
	for i, r := range retypes {
		for _, area := range []struct {
			what, subject string
			area          diff.Area
		}{
			{"state", fmt.Sprintf("field C%d.v", i), diff.SavedStates},
			{"event", fmt.Sprintf("field Go%d.v", i), diff.EventLog},
		} {
			t.Run(fmt.Sprintf("%s %s to %s", area.what, r.old, r.new), func(t *testing.T) {
				c := verdicts[area.subject]
				require.NotNil(t, c, "fsmgen diff reports the retype of %s", area.subject)
				v, why := c.Verdicts[area.area], c.Why[area.area]
				o := outcomes[fmt.Sprintf("%s %d", area.what, i)]
				require.NotNil(t, o, "the program's outcome for %s %d", area.what, i)
				t.Logf("%s: %s: %s; failed %q; changed %q", c.What, v, why, o.failed, o.changed)
				assert.Equal(t, r.want, v, "the verdict: %s", why)
				switch v {
				case diff.OK:
					assert.Empty(t, o.failed, "ok, but a value did not load")
					assert.Empty(t, o.changed, "ok, but a value loaded as another")
				case diff.Review:
					assert.Empty(t, o.failed, "review, but a value did not load")
				case diff.Breaks:
					assert.NotEmpty(t, append(o.failed, o.changed...), "breaks, but every value loaded unchanged")
				}
			})
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// sameJSON reports whether the JSON loaded holds what was saved: the same
// values (numbers compared exactly, members matched in any case, as
// encoding/json reads them), and, in objects, maybe more members.
func sameJSON(t *testing.T, saved, loaded string) bool {
	t.Helper()
	decode := func(s string) any {
		d := json.NewDecoder(bytes.NewReader([]byte(s)))
		d.UseNumber()
		var v any
		require.NoError(t, d.Decode(&v), s)
		return v
	}
	return holds(decode(saved), decode(loaded))
}

// holds reports whether loaded holds saved (see sameJSON).
func holds(saved, loaded any) bool {
	switch s := saved.(type) {
	case map[string]any:
		l, ok := loaded.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range s {
			lv, found := l[k]
			for lk := range l {
				if !found && strings.EqualFold(lk, k) {
					lv, found = l[lk], true
				}
			}
			if !found || !holds(v, lv) {
				return false
			}
		}
		return true
	case []any:
		l, ok := loaded.([]any)
		if !ok || len(l) != len(s) {
			return false
		}
		for i := range s {
			if !holds(s[i], l[i]) {
				return false
			}
		}
		return true
	case json.Number:
		l, ok := loaded.(json.Number)
		if !ok {
			return false
		}
		a, okA := new(big.Rat).SetString(s.String())
		b, okB := new(big.Rat).SetString(l.String())
		return okA && okB && a.Cmp(b) == 0
	}
	return fmt.Sprint(saved) == fmt.Sprint(loaded)
}
