package shapes

// ReadStore reads values.
type ReadStore interface {
	// Get reads a value.
	Get(key string) (value []byte, err error)
}

// Store keeps values. It embeds ReadStore.
type Store interface {
	ReadStore
	// Put writes a value.
	Put(key string, value []byte) error
}

// Renamed implements Store with other parameter names and unnamed
// results, which the compiler ignores.
type Renamed struct{ m map[string][]byte }

// Get reads k.
func (r *Renamed) Get(k string) ([]byte, error) { return r.m[k], nil }

// Put writes v under k.
func (r *Renamed) Put(k string, v []byte) error {
	r.m[k] = v
	return r.flush()
}

func (r *Renamed) flush() error { return nil }

// Save puts a value through the interface.
func Save(s Store) error { return s.Put("k", nil) }

// Sizer has a length.
type Sizer interface{ Len() int }

// Stack is a generic stack.
type Stack[T any] struct{ items []T }

// Len is the stack's length.
func (s *Stack[T]) Len() int { return len(s.items) }

// Push pushes v.
func (s *Stack[T]) Push(v T) { s.items = append(s.items, v) }

var registry []string

func init() { registry = append(registry, "store") }

func init() { registry = append(registry, archName()) }

// memStore is an unexported Store.
type memStore struct{ Renamed }

// Put writes nothing.
func (m *memStore) Put(key string, value []byte) error { return nil }
