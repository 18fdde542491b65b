// Package core computes prices.
package core

// Price is a price in cents.
func Price(n int) int { return n * 100 }
