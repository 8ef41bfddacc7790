package redact

// span is where a gram's occurrences lie in Redactor.occs.
type span struct{ start, end int32 }

// gramTable maps grams to their spans: an open-addressing hash table,
// at most a quarter full, so that a gram that is not there (nearly every
// lookup) costs a multiplication and a load or two.
type gramTable struct {
	keys  []uint64
	spans []span // end 0: an empty slot
	shift uint
}

// newGramTable returns the table of keys, with spans[i] the span of
// keys[i].
func newGramTable(keys []uint64, spans []span) gramTable {
	size, bits := 8, uint(3)
	for size < 4*len(keys) {
		size, bits = 2*size, bits+1
	}
	t := gramTable{keys: make([]uint64, size), spans: make([]span, size), shift: 64 - bits}
	for i, k := range keys {
		j := t.slot(k)
		for t.spans[j].end != 0 {
			j = (j + 1) & (len(t.keys) - 1)
		}
		t.keys[j], t.spans[j] = k, spans[i]
	}
	return t
}

// slot returns the first slot to look in for k.
func (t *gramTable) slot(k uint64) int { return int((k * 0x9E3779B97F4A7C15) >> t.shift) }

// lookup returns the span of the gram k, if it is in the table.
func (t *gramTable) lookup(k uint64) (span, bool) {
	if len(t.keys) == 0 {
		return span{}, false
	}
	for j := t.slot(k); ; j = (j + 1) & (len(t.keys) - 1) {
		sp := t.spans[j]
		if sp.end == 0 {
			return span{}, false
		}
		if t.keys[j] == k {
			return sp, true
		}
	}
}
