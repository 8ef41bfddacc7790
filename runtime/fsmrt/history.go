package fsmrt

import (
	"errors"
	"fmt"
	"slices"
)

// HistoryOf describes a composite state with a history (history: shallow
// or deep in the spec): the state, by its JSON kind, and its leaves, whose
// kinds are consecutive from First: Leaves[k-First] is the JSON kind of
// leaf k. A machine remembers, for each, the leaf it was in when it last
// left the state (zero: none yet), and saves it.
type HistoryOf[S Kind] struct {
	State  string
	First  S
	Leaves []string
	// Was lists the state's earlier JSON names (renamed_from), and
	// LeavesWas maps its leaves' earlier JSON names to their names now:
	// a machine saved by an earlier revision remembers under those.
	Was       []string
	LeavesWas map[string]string
	// Region is set for what a deep history remembers of one region of a
	// parallel state inside its state (or of the parallel state whose
	// history it is): the region's JSON name, whose leaves are Leaves.
	// RegionWas lists the region's earlier JSON names; Parallel is the
	// kind of the parallel state, and Of the index in Desc.History of the
	// history whose leaf it must be for the region's to mean anything.
	Region    string
	RegionWas []string
	Parallel  S
	Of        int
	// Restless lists the leaves the machine never rests in (a transient
	// state, a final state whose composite state completes at once),
	// which no history remembers.
	Restless []string
	// Finals lists, for a region of a parallel state with a done
	// transition, the region's final leaves: the machine never rests
	// with every region of it final (the done transition is taken in
	// that step), and no deep history remembers it so.
	Finals []string
}

// savedHistory is what a saved machine remembers of one composite state:
//
//	"history": [{"state": "on", "leaf": "paused"}]
//
// and, for what a deep history remembers of a region of a parallel state:
//
//	{"state": "on", "region": "playback", "leaf": "playing"}
type savedHistory struct {
	State  string `json:"state"`
	Region string `json:"region"`
	Leaf   string `json:"leaf"`
}

// SaveHistory is Save for a machine with histories: hist[i] is the leaf
// the machine remembers of d.History[i], zero for none; the remembered
// ones are saved as the member "history", in the order of d.History.
func (d *Desc[S, E, A]) SaveHistory(state any, timers []Timer, last TimerID, hist []S) ([]byte, error) {
	out, err := d.Save(state, timers, last)
	if err != nil {
		return nil, err
	}
	n := 0
	for i, k := range hist {
		if k == 0 {
			continue
		}
		h := d.History[i]
		if h.Region != "" && hist[h.Of] != h.Parallel {
			continue // left from another leaf since: forgotten
		}
		j := int(k) - int(h.First)
		if j < 0 || j >= len(h.Leaves) {
			return nil, fmt.Errorf("%s: save the history of %s: leaf %d is not inside it", d.Package, h.State, k)
		}
		if n == 0 {
			out = append(out[:len(out)-1], `,"history":[`...)
		} else {
			out = append(out, ',')
		}
		n++
		out = append(out, `{"state":`...)
		out = appendJSONString(out, h.State)
		if h.Region != "" {
			out = append(out, `,"region":`...)
			out = appendJSONString(out, h.Region)
		}
		out = append(out, `,"leaf":`...)
		out = appendJSONString(out, h.Leaves[j])
		out = append(out, '}')
	}
	if n > 0 {
		out = append(out, ']', '}')
	}
	return out, nil
}

// LoadStateHistory is LoadState for a machine with histories: it also
// reads what the machine remembers, strictly, into hist (as SaveHistory
// writes it). Each entry must name a composite state of d.History, once,
// and a leaf inside it; data saved before the state had a history (no
// entry) leaves its memory zero, so the state is entered through its
// initial child until it is next left.
func LoadStateHistory[I any, S, E, A Kind](d *Desc[S, E, A], data []byte, timers []Timer, last *TimerID, hist []S, decode func([]byte) (I, error)) (I, error) {
	var zero I
	s, err := d.open(data)
	if err != nil {
		return zero, err
	}
	state, err := decode(s.State)
	if err != nil {
		if errors.Is(err, ErrUnknownKind) {
			err = d.gone(s)
		}
		return zero, d.reshaped(s.Shape, err)
	}
	if err := d.loadTimers(s, timers, last); err != nil {
		return zero, err
	}
	if err := d.loadHistory(s, hist); err != nil {
		return zero, d.reshaped(s.Shape, err)
	}
	return state, nil
}

// loadHistory reads the "history" of a saved machine into hist.
func (d *Desc[S, E, A]) loadHistory(s *envelope, hist []S) error {
	for i, raw := range s.History {
		var h savedHistory
		if err := decodeStrict(raw, &h, "", nil); err != nil {
			return fmt.Errorf("%s: load a saved machine: history %d: %w", d.Package, i+1, err)
		}
		slot := -1
		for j, of := range d.History {
			if (of.State == h.State || slices.Contains(of.Was, h.State)) && (of.Region == h.Region || slices.Contains(of.RegionWas, h.Region)) {
				slot = j
			}
		}
		switch {
		case slot < 0 && h.Region != "":
			return fmt.Errorf("%s: load a saved machine: a history of state %q remembers region %q, which is no region of a parallel state its deep history holds in this revision", d.Package, h.State, h.Region)
		case slot < 0:
			return fmt.Errorf("%s: load a saved machine: a history of state %q, which is no state with a history in this revision", d.Package, h.State)
		case hist[slot] != 0 && h.Region != "":
			return fmt.Errorf("%s: load a saved machine: two histories of region %q of state %q", d.Package, h.Region, h.State)
		case hist[slot] != 0:
			return fmt.Errorf("%s: load a saved machine: two histories of state %q", d.Package, h.State)
		}
		of := d.History[slot]
		if now, ok := of.LeavesWas[h.Leaf]; ok {
			h.Leaf = now
		}
		for j, leaf := range of.Leaves {
			if leaf == h.Leaf {
				hist[slot] = of.First + S(j)
			}
		}
		if hist[slot] == 0 {
			return fmt.Errorf("%s: load a saved machine: the history of state %q remembers %q, which is no state inside it in this revision", d.Package, h.State, h.Leaf)
		}
		if slices.Contains(of.Restless, h.Leaf) {
			return fmt.Errorf("%s: load a saved machine: the history of state %q remembers %q, a state the machine never rests in", d.Package, h.State, h.Leaf)
		}
	}
	if err := d.allFinal(hist); err != nil {
		return err
	}
	for i, of := range d.History {
		if of.Region != "" && hist[i] != 0 && hist[of.Of] != of.Parallel {
			// The region's leaf is remembered only with its parallel
			// state: Save writes no other.
			return fmt.Errorf("%s: load a saved machine: the history of state %q remembers region %q, but not the parallel state the region is in", d.Package, of.State, of.Region)
		}
	}
	return nil
}

// allFinal refuses a memory that holds every region of a parallel state
// with a done transition in a final leaf (HistoryOf.Finals), which the
// machine never rests in.
func (d *Desc[S, E, A]) allFinal(hist []S) error {
	for i, of := range d.History {
		if len(of.Finals) == 0 || hist[i] == 0 {
			continue
		}
		all, first := true, -1
		for j, other := range d.History {
			if other.Region == "" || other.Of != of.Of || other.Parallel != of.Parallel {
				continue
			}
			if first < 0 {
				first = j
			}
			if k := int(hist[j] - other.First); hist[j] == 0 || k < 0 || k >= len(other.Leaves) || !slices.Contains(other.Finals, other.Leaves[k]) {
				all = false
			}
		}
		if all && first == i {
			return fmt.Errorf("%s: load a saved machine: the history of state %q remembers every region of a parallel state in a final state, where the machine never rests (its done transition is taken then)", d.Package, of.State)
		}
	}
	return nil
}
