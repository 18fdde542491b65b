//go:build ignore

// gen.go is a generator run by hand: never part of the package.
package shapes

func generated() {}
