package words

import porter "github.com/blevesearch/go-porterstemmer"

// Stem returns the Porter stem of the lower-case word w ("services" ->
// "servic", "directed" -> "direct"). A word that is not plain ASCII letters
// (a number, an identifier part in another script) or has at most two
// letters is returned unchanged: Porter's rules are English, and applied
// to other scripts they strip letters that are not suffixes.
func Stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	return porter.StemString(w)
}
