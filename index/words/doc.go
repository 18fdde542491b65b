// Package words is kgctx's one definition of a word: which lower-case
// words say nothing about a graph (the stop words) and how a word is
// reduced to the stem it is matched by (Porter). Every analyser in kgctx
// takes both from here: the composer's query words and name stems, the
// full-text index's description analyzer and its query analyser (package
// text), the down-weighted words of the lexical embedder (package embed),
// and the benchmark baselines' tokeniser and question wording (bench). A
// word dropped or stemmed one way when a query is read and another way
// when a name or a document is read can never match, so there is one list
// and one stemmer.
//
// The stop words are three lists (see stop.go), each analyser dropping
// the two its text needs: queries (IsStop) drop function words and
// request wording ("fix", "add", "find", "new") but keep the words names
// and titles are made of ("Up", "After Hours"); documents (Function) drop
// function words and those, but keep request wording, which prose is
// about; the embedder, which compares whole texts, discounts only the
// commonest function words (Core).
//
// Splitting text into words (identifier parts: AuthService -> auth,
// service; lower case) is text.SplitName's; text.AppendWords is the whole
// analyser (split, drop stop words, stem). This package is a leaf (no
// bleve, no engine) so that the embedder, which links neither, can share
// the list.
//
// # Concurrency
//
// Every function is safe for concurrent use: the list is built at init and
// never changed.
//
// # Memory ownership
//
// Function and Core return fresh slices the caller owns. Stem returns its
// argument or a new string.
//
// words has no error paths and therefore no errors.go.
package words
