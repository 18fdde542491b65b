package bench

import "errors"

// ErrUnknownScenario: the scenario name is not one of Scenarios.
var ErrUnknownScenario = errors.New("bench: unknown scenario")
