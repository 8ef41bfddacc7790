package redact

// region is a part of a text to replace: text[start:end].
type region struct{ start, end int }

// scan finds the runs of the forms in text, in order, and calls found for
// each, with the part of text it spans (whitespace inside included); it
// stops when found returns false. Runs that overlap are reported once,
// merged.
//
// The text is read once, whitespace skipped; the last gram characters
// read are kept in a register, and at every step-th character the
// register is looked up in the table of the forms' grams. A hit is
// extended both ways along the form; a run of at least the form's minRun
// characters is reported. Since step is the shortest minRun less gram
// plus one, every such run holds a sampled gram.
func scan[T ~string | ~[]byte](r *Redactor, text T, found func(region) bool) {
	if r == nil || len(r.forms) == 0 {
		return
	}
	var w uint64
	k, next := 0, r.step*((gram+r.step-1)/r.step) // characters read; the next sample
	cur := region{-1, -1}
	for i := 0; i < len(text); i++ {
		// Without a branch on whitespace, which ordinary text makes
		// unpredictable: keep is all ones for a character, 0 for a space.
		c := text[i]
		keep := keepMask[c]
		w = (w>>8|uint64(c)<<56)&keep | w&^keep
		if k += int(keep & 1); k < next {
			continue
		}
		next += r.step
		sp, ok := r.grams.lookup(w)
		if !ok {
			continue
		}
		g, ok := extend(r, text, i, sp)
		if !ok {
			continue
		}
		switch {
		case cur.start < 0:
			cur = g
		case g.start <= cur.end:
			cur.start, cur.end = min(cur.start, g.start), max(cur.end, g.end)
		default:
			if !found(cur) {
				return
			}
			cur = g
		}
		// Go on after the run, from a clean register.
		i, w, k, next = g.end-1, 0, 0, r.step*((gram+r.step-1)/r.step)
	}
	if cur.start >= 0 {
		found(cur)
	}
}

// extend extends the gram of text ending at index last along each of
// the occurrences sp lists, and returns the widest run that is at least
// as long as its form's minRun, if any.
func extend[T ~string | ~[]byte](r *Redactor, text T, last int, sp span) (region, bool) {
	// The gram's first character.
	first, n := last, 1
	for n < gram {
		if first--; !space[text[first]] {
			n++
		}
	}
	best, ok := region{}, false
	for _, o := range r.occs[sp.start:sp.end] {
		f := r.forms[o.f].text
		start, back := before(text, first, f[:o.off])
		end, ahead := after(text, last+1, f[int(o.off)+gram:])
		if back+gram+ahead < r.forms[o.f].minRun {
			continue
		}
		if !ok {
			best, ok = region{start, end}, true
			continue
		}
		best.start, best.end = min(best.start, start), max(best.end, end)
	}
	return best, ok
}

// before matches the end of f against text just before index i,
// whitespace skipped, and returns where the match starts in text and how
// many characters of f it holds.
func before[T ~string | ~[]byte](text T, i int, f string) (start, n int) {
	start = i
	for j := i - 1; j >= 0 && n < len(f); j-- {
		c := text[j]
		if space[c] {
			continue
		}
		if c != f[len(f)-1-n] {
			break
		}
		n++
		start = j
	}
	return start, n
}

// after matches the start of f against text from index i on, whitespace
// skipped, and returns where the match ends in text and how many
// characters of f it holds.
func after[T ~string | ~[]byte](text T, i int, f string) (end, n int) {
	end = i
	for j := i; j < len(text) && n < len(f); j++ {
		c := text[j]
		if space[c] {
			continue
		}
		if c != f[n] {
			break
		}
		n++
		end = j + 1
	}
	return end, n
}
