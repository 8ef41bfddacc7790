// Package suggest finds the known name closest to a misspelled one, for
// "did you mean" hints in error messages.
package suggest

import "strings"

// Closest returns the candidate nearest to name by edit distance (ignoring
// case), or "" when none is close enough to be a plausible typo. Ties go to
// the candidate listed first.
func Closest(name string, candidates []string) string {
	best, bestDist := "", len(name)/3+1
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

// distance is the Levenshtein edit distance between a and b, by runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
