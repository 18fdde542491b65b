package bench

import "errors"

// ErrUnknownScenario: the scenario name is not one of Scenarios.
var ErrUnknownScenario = errors.New("bench: unknown scenario")

// ErrNoWorkload: the scenario's input gives nothing to ask (a module
// without a documented function).
var ErrNoWorkload = errors.New("bench: no workload")
