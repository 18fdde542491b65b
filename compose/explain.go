package compose

import (
	"math"
	"slices"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/traverse"
)

// scoreParts explains one candidate: its score's parts from the walk's
// record, the seeds' calibration, the importance and spread rank the
// block gave it, and the path before it from the walk's order (sc.walk).
func (c *Composer) scoreParts(v *engine.View, sc *graphScratch, cd *traverse.Candidate, imp float64, spreadRank int) *ScoreParts {
	decay := c.Expand.HopDecay
	if decay == 0 {
		decay = traverse.DefaultHopDecay
	}
	line := func(cd *traverse.Candidate) string {
		return Sanitize(v.NodeName(cd.Src), MaxNameRunes) + " → " + Sanitize(v.RelName(cd.Rel), MaxNameRunes) + " → " + Sanitize(v.NodeName(cd.Dst), MaxNameRunes)
	}
	{
		p := &ScoreParts{Importance: imp, Hop: int(cd.Hop), HopDecay: math.Pow(decay, max(float64(cd.Hop)-1, 0)),
			SeedScore: float64(cd.SeedScore), QueryMatch: float64(cd.Match), Hub: float64(cd.HubF), Weight: float64(cd.WeightF), Code: float64(cd.EdgeF),
			Spread: 1 / spreadFactorOf(spreadRate(sc.tseeds), spreadRank)}
		if v.Live(cd.Seed) {
			p.Seed, p.SeedNodeID = v.NodeName(cd.Seed), v.NodeID(cd.Seed)
		}
		for _, s := range sc.qs.seeds {
			if s.node == cd.Seed {
				p.SeedName, p.SeedFused, p.SeedVerbatim = s.name, s.fused, s.verbatim
				break
			}
		}
		own := p.SeedScore * p.QueryMatch * p.HopDecay * p.Hub * p.Code * p.Weight * p.Spread
		p.Lent = imp > own*(1+1e-6)
		for j := cd.Parent; j > 0 && int(j) <= len(sc.walk) && len(p.Path) < traverse.MaxDepth; j = sc.walk[j-1].Parent {
			p.Path = append(p.Path, line(&sc.walk[j-1]))
		}
		slices.Reverse(p.Path)
		return p
	}
}
