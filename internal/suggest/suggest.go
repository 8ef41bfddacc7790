// Package suggest finds the known name closest to a misspelled one, for
// "did you mean" hints in error messages.
package suggest

import "strings"

// Closest returns the candidate nearest to name by edit distance (ignoring
// case), or "" when none is close enough to be a plausible typo. Ties go to
// the candidate listed first.
func Closest(name string, candidates []string) string {
	// A plausible typo is at most one edit per three letters, and one at least.
	best, bestDist := "", max(1, (len(name)+2)/3)+1
	lower := strings.ToLower(name)
	for _, c := range candidates {
		if d := distance(lower, strings.ToLower(c)); d < bestDist || (d == bestDist && best != "" && c < best) {
			best, bestDist = c, d
		}
	}
	return best
}

// DidYouMean returns ` (did you mean "x"?)` for the closest candidate, or "".
func DidYouMean(name string, candidates []string) string {
	if c := Closest(name, candidates); c != "" {
		return ` (did you mean "` + c + `"?)`
	}
	return ""
}

// distance is the edit distance between a and b, by runes, counting an
// insertion, a deletion, a substitution or a swap of two neighbours as one
// edit (optimal string alignment).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
