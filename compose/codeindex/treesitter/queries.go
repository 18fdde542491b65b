package treesitter

import (
	"embed"
	"fmt"
)

// The grammars' own tag queries (queries/tags.scm of each grammar's
// module, copied by scripts/build-grammars.sh).
//
//go:embed queries/*.scm
var queries embed.FS

// TagsQuery is the tags query of lang's grammar: definitions and
// references, as Aider's repository map and GitHub's code navigation use
// them. TypeScript's and TSX's extend JavaScript's (the TypeScript
// grammar's query is written as an addition to it).
func TagsQuery(lang Language) (string, error) {
	file := map[Language][]string{
		Python:     {"python"},
		JavaScript: {"javascript"},
		TypeScript: {"javascript", "typescript"},
		TSX:        {"javascript", "typescript"},
		Java:       {"java"},
		Rust:       {"rust"},
	}[lang]
	if file == nil {
		return "", fmt.Errorf("%w: %q", ErrUnknownLanguage, lang)
	}
	var out string
	for _, f := range file {
		b, err := queries.ReadFile("queries/" + f + "-tags.scm")
		if err != nil {
			return "", err
		}
		out += string(b) + "\n"
	}
	return out, nil
}
