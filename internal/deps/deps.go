//go:build deps

// Package deps pins the modules the project depends on until code imports them.
package deps
import (
 _ "github.com/dgraph-io/badger/v4"
 _ "github.com/blevesearch/bleve/v2"
 _ "github.com/cedar-policy/cedar-go"
 _ "github.com/labstack/echo/v4"
 _ "github.com/RoaringBitmap/roaring/v2"
 _ "github.com/prometheus/client_golang/prometheus"
)

