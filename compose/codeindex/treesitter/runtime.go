package treesitter

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

//go:embed wasm/*.wasm.gz
var modules embed.FS

// MaxSourceSize is the largest source Parse takes (4 MiB): the indexer
// reads files of at most 1 MiB, and the dump of a tree is about 30 bytes
// a node.
const MaxSourceSize = 4 << 20

// Language names an embedded grammar.
type Language string

// The embedded grammars.
const (
	Python     Language = "python"
	JavaScript Language = "javascript"
	TypeScript Language = "typescript"
	TSX        Language = "tsx"
	Java       Language = "java"
	Rust       Language = "rust"
)

// Languages lists the embedded grammars.
var Languages = []Language{Python, JavaScript, TypeScript, TSX, Java, Rust}

// grammarOf says which module holds a language and its index there (the
// order of scripts/build-grammars.sh's KG_LANG defines).
var grammarOf = map[Language]struct {
	module string
	index  uint32
}{
	Python:     {"python", 0},
	JavaScript: {"javascript", 0},
	TypeScript: {"typescript", 0},
	TSX:        {"typescript", 1},
	Java:       {"java", 0},
	Rust:       {"rust", 0},
}

// Options of a Runtime; the zero value is the defaults.
type Options struct {
	// CacheDir keeps the modules' compiled code between processes (a
	// first compile takes 0.5 to 2 s a module, a cached one tens of
	// milliseconds). "" keeps it in memory for the Runtime's life. It
	// must be a directory that no other user can write: its files are
	// machine code this process runs.
	CacheDir string
	// MaxMemory bounds an instance's memory, in bytes (default 512 MiB,
	// at most 4 GiB): a parse that needs more fails (ErrParse).
	MaxMemory uint64
	// RecycleAbove drops an instance whose memory has grown past it,
	// in bytes, when a call returns it (default 64 MiB): WebAssembly
	// memory never shrinks, and one huge file must not keep it for the
	// rest of the run.
	RecycleAbove uint64
	// Instances bounds the instances of one module alive at once
	// (default GOMAXPROCS): a call waits for a free one.
	Instances int
	// ParseTimeout bounds one call into a module (default 20 s): a
	// source built to be slow to parse is given up (ErrParse).
	ParseTimeout time.Duration
	// Interpreter runs the modules in wazero's interpreter, never its
	// compiler (50 times slower; for tests of both paths).
	Interpreter bool
}

// Validate reports a bad option.
func (o *Options) Validate() error {
	if o.MaxMemory > 4<<30 {
		return fmt.Errorf("treesitter: MaxMemory %d is over 4 GiB, WebAssembly's limit", o.MaxMemory)
	}
	if o.Instances < 0 || o.ParseTimeout < 0 {
		return fmt.Errorf("treesitter: negative Instances or ParseTimeout")
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.MaxMemory == 0 {
		o.MaxMemory = 512 << 20
	}
	if o.RecycleAbove == 0 {
		o.RecycleAbove = 64 << 20
	}
	if o.Instances == 0 {
		o.Instances = runtime.GOMAXPROCS(0)
	}
	if o.ParseTimeout == 0 {
		o.ParseTimeout = 20 * time.Second
	}
	return o
}

// Runtime parses and queries sources of the embedded languages. Safe for
// concurrent use; Close it when done.
type Runtime struct {
	o     Options
	rt    wazero.Runtime
	cache wazero.CompilationCache

	mu      sync.Mutex
	mods    map[string]*module
	closed  bool
	queries int // query ids given out
}

// New makes a Runtime. Modules are compiled on first use.
func New(ctx context.Context, o *Options) (*Runtime, error) {
	var opts Options
	if o != nil {
		if err := o.Validate(); err != nil {
			return nil, err
		}
		opts = *o
	}
	opts = opts.withDefaults()
	cfg := wazero.NewRuntimeConfig()
	if opts.Interpreter {
		cfg = wazero.NewRuntimeConfigInterpreter()
	}
	// No WithCloseOnContextDone: the checks it compiles into every loop
	// make parsing three times slower. The modules ask the host instead
	// (kgctx.stop, from tree-sitter's progress callbacks).
	cfg = cfg.WithMemoryLimitPages(uint32(min(opts.MaxMemory/65536, 65536)))
	r := &Runtime{o: opts, mods: map[string]*module{}}
	if opts.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("treesitter: compilation cache: %w", err)
		}
		r.cache = c
		cfg = cfg.WithCompilationCache(c)
	}
	r.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
	// The modules import a few WASI functions (stdio, exit) that the
	// parser never calls on its own paths; they get wazero's, with no
	// file system, environment or clock configured.
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r.rt); err != nil {
		r.rt.Close(ctx)
		return nil, fmt.Errorf("treesitter: wasi: %w", err)
	}
	// kgctx.stop tells a parse or a query in progress to stop: the
	// context of the call is done (cancelled, or past ParseTimeout).
	_, err := r.rt.NewHostModuleBuilder("kgctx").NewFunctionBuilder().
		WithFunc(func(ctx context.Context) uint32 {
			if ctx.Err() != nil {
				return 1
			}
			return 0
		}).Export("stop").Instantiate(ctx)
	if err != nil {
		r.rt.Close(ctx)
		return nil, fmt.Errorf("treesitter: host functions: %w", err)
	}
	return r, nil
}

// Close frees the compiled modules and every instance.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	err := r.rt.Close(ctx)
	if r.cache != nil {
		if cerr := r.cache.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}

// module is one compiled module: its symbol tables and its pool.
type module struct {
	name string
	once sync.Once
	err  error
	cm   wazero.CompiledModule
	// langs are the tables of the module's grammars, by index.
	langs []*table
	sem   chan struct{} // one token per live instance
	mu    sync.Mutex
	idle  []*instance
}

// table is a grammar's symbol and field names.
type table struct {
	lang    Language
	index   uint32
	symbols []string
	named   []bool
	fields  []string
	fieldID map[string]uint16
}

// module returns the compiled module of a language, compiling it on first
// use.
func (r *Runtime) module(ctx context.Context, name string) (*module, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	m := r.mods[name]
	if m == nil {
		m = &module{name: name, sem: make(chan struct{}, r.o.Instances)}
		r.mods[name] = m
	}
	r.mu.Unlock()
	m.once.Do(func() { m.err = r.compile(ctx, m) })
	return m, m.err
}

func (r *Runtime) compile(ctx context.Context, m *module) error {
	gz, err := modules.ReadFile("wasm/" + m.name + ".wasm.gz")
	if err != nil {
		return fmt.Errorf("treesitter: no module %s: %w", m.name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return fmt.Errorf("treesitter: module %s: %w", m.name, err)
	}
	bin, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("treesitter: module %s: %w", m.name, err)
	}
	if m.cm, err = r.rt.CompileModule(ctx, bin); err != nil {
		return fmt.Errorf("treesitter: compile %s: %w", m.name, err)
	}
	// The tables are read from a first instance, which then joins the
	// pool.
	m.sem <- struct{}{}
	in, err := r.instantiate(ctx, m)
	if err != nil {
		<-m.sem
		return err
	}
	defer r.release(m, in, nil)
	n, err := in.call(ctx, "kg_language_count")
	if err != nil {
		return err
	}
	for i := range uint32(n) {
		t := &table{index: i, fieldID: map[string]uint16{}}
		for l, g := range grammarOf {
			if g.module == m.name && g.index == i {
				t.lang = l
			}
		}
		ns, err := in.call(ctx, "kg_symbol_count", uint64(i))
		if err != nil {
			return err
		}
		for s := range uint32(ns) {
			name, err := in.cstring(ctx, "kg_symbol_name", uint64(i), uint64(s))
			if err != nil {
				return err
			}
			t.symbols = append(t.symbols, name)
			t.named = append(t.named, in.out(1) == 0) // TSSymbolTypeRegular
		}
		nf, err := in.call(ctx, "kg_field_count", uint64(i))
		if err != nil {
			return err
		}
		t.fields = append(t.fields, "") // field 0: none
		for f := uint32(1); f <= uint32(nf); f++ {
			name, err := in.cstring(ctx, "kg_field_name", uint64(i), uint64(f))
			if err != nil {
				return err
			}
			t.fields = append(t.fields, name)
			t.fieldID[name] = uint16(f)
		}
		m.langs = append(m.langs, t)
	}
	return nil
}

// instance is one instance of a module, used by one goroutine at a time.
type instance struct {
	mod  api.Module
	mem  api.Memory
	fns  map[string]api.Function
	outp uint32 // address of kg_out
	// queries compiled in this instance, by Query.id.
	queries map[int]uint32
}

func (r *Runtime) instantiate(ctx context.Context, m *module) (*instance, error) {
	mod, err := r.rt.InstantiateModule(ctx, m.cm, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
	if err != nil {
		return nil, fmt.Errorf("treesitter: instantiate %s: %w", m.name, err)
	}
	in := &instance{mod: mod, mem: mod.Memory(), fns: map[string]api.Function{}, queries: map[int]uint32{}}
	p, err := in.call(ctx, "kg_out_ptr")
	if err != nil {
		mod.Close(ctx)
		return nil, err
	}
	in.outp = uint32(p)
	return in, nil
}

// acquire takes an idle instance of m, or makes one when fewer than
// Options.Instances are alive; else it waits.
func (r *Runtime) acquire(ctx context.Context, m *module) (*instance, error) {
	select {
	case m.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	m.mu.Lock()
	if n := len(m.idle); n > 0 {
		in := m.idle[n-1]
		m.idle = m.idle[:n-1]
		m.mu.Unlock()
		return in, nil
	}
	m.mu.Unlock()
	in, err := r.instantiate(ctx, m)
	if err != nil {
		<-m.sem
		return nil, err
	}
	return in, nil
}

// release gives in back to m's pool, or closes it after a failed call or
// when its memory has grown past Options.RecycleAbove.
func (r *Runtime) release(m *module, in *instance, callErr error) {
	if callErr != nil || uint64(in.mem.Size()) > r.o.RecycleAbove {
		in.mod.Close(context.Background())
	} else {
		m.mu.Lock()
		m.idle = append(m.idle, in)
		m.mu.Unlock()
	}
	<-m.sem
}

func (in *instance) fn(name string) (api.Function, error) {
	f := in.fns[name]
	if f == nil {
		if f = in.mod.ExportedFunction(name); f == nil {
			return nil, fmt.Errorf("treesitter: the module exports no %s", name)
		}
		in.fns[name] = f
	}
	return f, nil
}

// call calls an export that returns one value.
func (in *instance) call(ctx context.Context, name string, args ...uint64) (uint64, error) {
	f, err := in.fn(name)
	if err != nil {
		return 0, err
	}
	res, err := f.Call(ctx, args...)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrParse, name, err)
	}
	if len(res) == 0 {
		return 0, nil
	}
	return res[0], nil
}

// out reads kg_out[i].
func (in *instance) out(i uint32) uint32 {
	v, _ := in.mem.ReadUint32Le(in.outp + 4*i)
	return v
}

// cstring calls an export that returns a string's address and sets
// kg_out[0] to its length.
func (in *instance) cstring(ctx context.Context, name string, args ...uint64) (string, error) {
	p, err := in.call(ctx, name, args...)
	if err != nil {
		return "", err
	}
	if p == 0 {
		return "", nil
	}
	b, ok := in.mem.Read(uint32(p), in.out(0))
	if !ok {
		return "", fmt.Errorf("%w: %s: out of the module's memory", ErrParse, name)
	}
	return string(b), nil
}

// write copies b into the module's input buffer.
func (in *instance) write(ctx context.Context, b []byte) error {
	p, err := in.call(ctx, "kg_input", uint64(len(b)))
	if err != nil {
		return err
	}
	if p == 0 || !in.mem.Write(uint32(p), b) {
		return fmt.Errorf("%w: no memory for a %d-byte input", ErrParse, len(b))
	}
	return nil
}

// words reads n little-endian words at p.
func (in *instance) words(p, n uint32) ([]uint32, bool) {
	b, ok := in.mem.Read(p, 4*n)
	if !ok {
		return nil, false
	}
	w := make([]uint32, n)
	for i := range w {
		j := 4 * i
		w[i] = uint32(b[j]) | uint32(b[j+1])<<8 | uint32(b[j+2])<<16 | uint32(b[j+3])<<24
	}
	return w, true
}
