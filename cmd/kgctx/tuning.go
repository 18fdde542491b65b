package main

import (
	"errors"
	"flag"
	"github.com/kgctx/kgctx/compose/service"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/traverse"
)

// tuning holds the retrieval knobs shared by serve (and any command that
// composes blocks): HNSW parameters and the walk's caps.
type tuning struct {
	m, efConstruction, efSearch int
	maxFanout, maxVisited       int
	hopDecay                    float64
	graphShare, feedbackAlpha   float64
	propagation, similarError   float64
}

func (t *tuning) register(fs *flag.FlagSet) {
	fs.IntVar(&t.m, "hnsw-m", 16, "HNSW M (neighbours per node; layer 0 keeps 2M)")
	fs.IntVar(&t.efConstruction, "hnsw-ef-construction", 200, "HNSW efConstruction")
	fs.IntVar(&t.efSearch, "hnsw-ef-search", 64, "HNSW efSearch")
	fs.IntVar(&t.maxFanout, "max-fanout", traverse.DefaultMaxFanout, "edges a node offers to the walk, strongest first")
	fs.IntVar(&t.maxVisited, "max-visited", traverse.DefaultMaxVisited, "nodes a walk may visit")
	fs.Float64Var(&t.hopDecay, "hop-decay", traverse.DefaultHopDecay, "score factor per extra hop, in (0,1]")
	fs.Float64Var(&t.graphShare, "graph-share", compose.DefaultGraphShare, "share of a session block the graph may take, in (0,1]")
	fs.Float64Var(&t.feedbackAlpha, "feedback-alpha", 0.2, "EMA rate of session feedback, in (0,1]")
	fs.Float64Var(&t.propagation, "propagation-rate", compose.DefaultPropagationRate, "confidence a success propagates to fixes of similar errors (x 0.1), in (0,1]")
	fs.Float64Var(&t.similarError, "similar-error-score", compose.DefaultSimilarErrorScore, "cosine similarity from which two errors are similar_to, in (0,1]")
}

func (t *tuning) apply(cfg *service.Config) error {
	cfg.Index.HNSW.M, cfg.Index.HNSW.EfConstruction, cfg.Index.HNSW.EfSearch = t.m, t.efConstruction, t.efSearch
	cfg.Expand = traverse.Options{MaxFanout: t.maxFanout, MaxVisited: t.maxVisited, HopDecay: t.hopDecay}
	if err := cfg.Expand.Validate(); err != nil {
		return err
	}
	for _, v := range []float64{t.graphShare, t.feedbackAlpha, t.propagation, t.similarError} {
		if !(v > 0 && v <= 1) {
			return errors.New("--graph-share, --feedback-alpha, --propagation-rate and --similar-error-score must be in (0,1]")
		}
	}
	cfg.GraphShare, cfg.FeedbackAlpha = t.graphShare, t.feedbackAlpha
	cfg.PropagationRate, cfg.SimilarErrorScore = t.propagation, t.similarError
	return cfg.Index.Validate()
}
