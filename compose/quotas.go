package compose

import (
	"fmt"
	"maps"

	"github.com/kgctx/kgctx/engine"
)

// QuotaLimits bound what one tenant may take. In QuotaConfig.Defaults a
// zero (absent) field is the built-in default (DefaultQuotaLimits); in an
// org override it is the operator's default; a negative value is
// "unlimited".
type QuotaLimits struct {
	// ReadsPerSecond and WritesPerSecond bound the requests of one token
	// on one node (a token bucket holding one second of requests: bursts
	// up to the rate pass at once). Writes are the requests that change
	// something (imports, observations, deletes, configuration, tokens,
	// session state); the rest (blocks, queries, verb events) are reads.
	ReadsPerSecond  float64 `json:"readsPerSecond,omitempty"`
	WritesPerSecond float64 `json:"writesPerSecond,omitempty"`
	// ImportTripletsPerMinute bounds the triplets an org imports (a bucket
	// holding a minute's worth: one import may carry that many at once).
	ImportTripletsPerMinute int64 `json:"importTripletsPerMinute,omitempty"`
	// NodesPerProject, EdgesPerProject and ObservationsPerProject bound a
	// project's size: a write that would pass one is refused whole.
	NodesPerProject        int64 `json:"nodesPerProject,omitempty"`
	EdgesPerProject        int64 `json:"edgesPerProject,omitempty"`
	ObservationsPerProject int64 `json:"observationsPerProject,omitempty"`
}

// DefaultQuotaLimits are generous: the README, the benchmarks and a
// 1M-triplet import pass untouched. They stop a runaway client, not a
// busy one.
var DefaultQuotaLimits = QuotaLimits{
	ReadsPerSecond:          10_000,
	WritesPerSecond:         2_000,
	ImportTripletsPerMinute: 20_000_000,
	NodesPerProject:         20_000_000,
	EdgesPerProject:         100_000_000,
	ObservationsPerProject:  10_000_000,
}

// QuotaConfig is the operator's quotas: defaults and per-org overrides
// (GET|PUT /v1/admin/quotas).
type QuotaConfig struct {
	Defaults     QuotaLimits            `json:"defaults"`
	OrgOverrides map[string]QuotaLimits `json:"orgOverrides"`
}

// DefaultQuotas is the configuration nothing was stored for.
func DefaultQuotas() QuotaConfig {
	return QuotaConfig{Defaults: DefaultQuotaLimits, OrgOverrides: map[string]QuotaLimits{}}
}

// over fills l's zero fields from base.
func (l QuotaLimits) over(base QuotaLimits) QuotaLimits {
	pick := func(v, b float64) float64 {
		if v == 0 {
			return b
		}
		return v
	}
	pickI := func(v, b int64) int64 {
		if v == 0 {
			return b
		}
		return v
	}
	return QuotaLimits{
		ReadsPerSecond:          pick(l.ReadsPerSecond, base.ReadsPerSecond),
		WritesPerSecond:         pick(l.WritesPerSecond, base.WritesPerSecond),
		ImportTripletsPerMinute: pickI(l.ImportTripletsPerMinute, base.ImportTripletsPerMinute),
		NodesPerProject:         pickI(l.NodesPerProject, base.NodesPerProject),
		EdgesPerProject:         pickI(l.EdgesPerProject, base.EdgesPerProject),
		ObservationsPerProject:  pickI(l.ObservationsPerProject, base.ObservationsPerProject),
	}
}

// For returns the limits that apply to org: its override over the
// defaults.
func (c QuotaConfig) For(org string) QuotaLimits {
	d := c.Defaults.over(DefaultQuotaLimits)
	if o, ok := c.OrgOverrides[org]; ok {
		return o.over(d)
	}
	return d
}

func (c *QuotaConfig) normalize() error {
	if err := c.Validate(); err != nil {
		return err
	}
	c.Defaults = c.Defaults.over(DefaultQuotaLimits)
	if c.OrgOverrides == nil {
		c.OrgOverrides = map[string]QuotaLimits{}
	}
	return nil
}

func (c QuotaConfig) clone() QuotaConfig {
	c.OrgOverrides = maps.Clone(c.OrgOverrides)
	return c
}

// Validate checks the org ids and that rates are finite.
func (c QuotaConfig) Validate() error {
	check := func(where string, l QuotaLimits) error {
		for _, r := range []float64{l.ReadsPerSecond, l.WritesPerSecond} {
			if r != r || r > 1e9 { // NaN or absurd
				return fmt.Errorf("%w: %s: a rate must be a number up to 1e9 (negative: unlimited)", ErrInvalidRequest, where)
			}
		}
		return nil
	}
	if err := check("defaults", c.Defaults); err != nil {
		return err
	}
	if len(c.OrgOverrides) > 100_000 {
		return fmt.Errorf("%w: orgOverrides has %d entries, the limit is 100000", ErrInvalidRequest, len(c.OrgOverrides))
	}
	for org, l := range c.OrgOverrides {
		if err := engine.ValidateID(org); err != nil {
			return fmt.Errorf("%w: orgOverrides: %v", ErrInvalidRequest, err)
		}
		if err := check("orgOverrides."+org, l); err != nil {
			return err
		}
	}
	return nil
}

// Unlimited reports whether a limit value means "no limit".
func Unlimited[T int64 | float64](v T) bool { return v < 0 }
