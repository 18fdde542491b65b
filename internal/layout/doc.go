// Package layout holds the repository's structural tests: the one-way
// dependency order of DESIGN.md, the rule that only api imports Echo, and
// within engine, that the core imports none of its sub-packages but the
// leaf engine/model and they import no other (engineDeps lists the
// exceptions), and that only tests import the test kit engine/enginetest;
// and that the client, api/client, links no storage (no Badger, no
// roaring).
// It has no code of its own.
package layout
