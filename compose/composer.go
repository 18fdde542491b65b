package compose

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/index/fuse"
	"github.com/kgctx/kgctx/policy"
	"github.com/kgctx/kgctx/traverse"
)

// SessionWrites carries the session state a block or an in-session
// inject records.
type SessionWrites interface {
	PutInjectionLog(ctx context.Context, l sessionlog.InjectionLog) (string, error)
	Enqueue(ctx context.Context, in delivery.Inject) (delivery.Inject, bool, error)
}

func (c *Composer) putInjectionLog(ctx context.Context, l sessionlog.InjectionLog) (string, error) {
	if c.Writes != nil {
		return c.Writes.PutInjectionLog(ctx, l)
	}
	return c.Logs.PutInjectionLog(l)
}

func (c *Composer) enqueue(ctx context.Context, in delivery.Inject) (delivery.Inject, bool, error) {
	if c.Writes != nil {
		return c.Writes.Enqueue(ctx, in)
	}
	return c.Delivery.Enqueue(in, time.Now())
}

// Composer builds blocks from a store, its seed index and a PEP.
type Composer struct {
	Store *engine.Store
	// Logs keeps the injection logs of session blocks; Delivery queues the
	// in-session injects. Both are the store's (sessionlog.New,
	// delivery.New).
	Logs     *sessionlog.Store
	Delivery *delivery.Store
	// Writes, when set, carries the injection logs and injects the
	// composer and the injector make (a cluster's log); nil writes them
	// to Logs and Delivery at once.
	Writes SessionWrites
	Index  *index.Index
	PEP    *policy.PEP
	// Expand holds the walk's caps and decay (MaxFanout, MaxVisited,
	// HopDecay); Depth comes from each request. MaxFanout also bounds the
	// errors a tool's success visits (see propagationTargets).
	Expand traverse.Options
	// Settings hold the configuration documents (budgets, gates, ...).
	Settings *Settings
	// GraphShare is the share of a session block the graph part may take
	// (default 0.4).
	GraphShare float64
	// PropagationRate scales the confidence a success propagates to the
	// fixes of similar errors (default 0.3); SimilarErrorScore is the
	// cosine similarity from which two errors are similar_to (default
	// 0.75).
	PropagationRate, SimilarErrorScore float64
	Logger                             *slog.Logger

	pool sync.Pool // *graphScratch

	codes             codeInfos // each scope's reading of its code graph
	freqs             sync.Map  // engine.Tenant -> *nameFreqs
	nameLens, relLens lenCache  // textLen by node id, by relationship id
	relStems          stemCache // content stems of relationship names by relationship id
	nameStems         stemCache // content stems of node names by node id
	ownStems          stemCache // content stems of code symbols' own names (ownName) by node id
}

type graphScratch struct {
	seeds  []fuse.Ranked
	tseeds []traverse.Seed
	// walk is the walk's candidates in the walk's order (their Parent
	// indexes refer to it: explain reads paths there); cands the render
	// entries made from them, which a render consumes (the ranker
	// reorders and overwrites them).
	walk  []traverse.Candidate
	cands []entry
	edges []uint32
	qv    []float32 // the query's embedding, when the caller has it
	qs    queryScratch
	// keep asks prepareGraph to keep a copy of the prepared entries in
	// orig, so that renderGraph can render the block again at another
	// room (the session block); rendered says a render consumed cands.
	keep, rendered bool
	orig           []entry
	// floor is the block's relevance floor: the request's minRelevance, or
	// the default (floorAuto) that seeds lowers to none in a code graph.
	floor     float64
	floorAuto bool
	// codeGraph says the seeds are a code graph's (codeGraph); located
	// that one of them carries a location (an indexer's graph, whose
	// nodes without one are outside the repository: outsideLine).
	codeGraph, located bool
	// shown is the set of nodes a render has put in its block.
	shown map[uint32]bool
	// The spread's scratch: each walk candidate's seed group, the groups'
	// starts, and their fill positions.
	starts, fill []int32
	group        []uint8  // each candidate's seed group
	blk          blockBuf // the block being rendered
	ln           lineBuf  // the entry being rendered
	// mapMode is the request's code map mode (CodeMapOff unless the block
	// asks: the in-session injector's never has one); codeMap whether the
	// prepared block has one; cmap the map being rendered.
	mapMode CodeMapMode
	codeMap bool
	cmap    codeMapBuf
}

func (c *Composer) scratch() *graphScratch {
	if sc, ok := c.pool.Get().(*graphScratch); ok {
		sc.qv, sc.mapMode, sc.codeMap, sc.keep, sc.rendered, sc.floor, sc.floorAuto, sc.codeGraph, sc.located = nil, CodeMapOff, false, false, false, 0, false, false, false
		return sc
	}
	return &graphScratch{mapMode: CodeMapOff}
}

func (c *Composer) log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
