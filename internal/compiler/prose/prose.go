// Package prose holds the small pieces of English that fsmgen's messages
// and generated comments share.
package prose

import "strings"

// consonantU are the beginnings of words that start with a vowel letter
// but the sound of a consonant ("a uint64", "a Unit", "a User", "a one-shot");
// "un" otherwise starts a vowel ("an Uninstall", "an Undo").
var consonantU = []string{"uint", "unic", "unif", "unio", "uniq", "unit", "univ", "unix", "usa", "use", "usu", "uti", "eu", "one"}

// Article returns "a" or "an" for word, as it is said: "an Upload", "an
// order", "a uint64", "a User".
func Article(word string) string {
	lower := strings.ToLower(word)
	for _, p := range consonantU {
		if strings.HasPrefix(lower, p) {
			return "a"
		}
	}
	if lower != "" && strings.ContainsRune("aeiou", rune(lower[0])) {
		return "an"
	}
	return "a"
}
