package decide

import (
	"slices"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// Maps are the calibration maps a call read of its scope, in one store
// read, and what an open answer read with them. A nil *Maps is a call that
// read none (reputation off, or the store failed): its confidence is
// uncalibrated and the coincidence of wrong answers the default.
type Maps struct {
	// Labels names the verdict of each of Calibrations for a validation
	// ("VALID", "INVALID"): a panel's VALID and its INVALID are right at
	// different rates. nil for a delegation, whose one map is its tier's.
	Labels []consensus.Label
	// Calibrations holds the maps, parallel to Labels.
	Calibrations []*reputation.Calibration
	// Leaders holds the maps of the verdicts a leader gives alone,
	// parallel to Labels; nil when no leader was asked for.
	Leaders []*reputation.Calibration
	// Open reports that Coincide was read, for an open answer.
	Open bool
	// Coincide is the chance, learned in the scope, that two wrong
	// answers coincide (reputation.Book.Coincidence).
	Coincide float64
	// Records holds, for a validation, each session's record against
	// the majority of the other votes of its calls
	// (reputation.Snapshot.Records), which the dissent rule reads; nil
	// when no leader was asked for.
	Records []reputation.Lead
}

// For returns the map of out's winner: the map of its verdict for a
// validation, the tier's for a delegation; nil when m is nil and for a
// validation without a winner (see Lower).
func (m *Maps) For(out consensus.Outcome) *reputation.Calibration {
	switch {
	case m == nil:
		return nil
	case m.Labels == nil:
		return m.Calibrations[0]
	case out.Winner < 0 || out.Agreeing == 0:
		return nil
	}
	if i := slices.Index(m.Labels, out.Label); i >= 0 {
		return m.Calibrations[i]
	}
	return nil
}

// Leader returns the map of the verdict label a leader gave alone; nil
// when m is nil or read no leader's maps.
func (m *Maps) Leader(label consensus.Label) *reputation.Calibration {
	if m == nil || m.Leaders == nil {
		return nil
	}
	if i := slices.Index(m.Labels, label); i >= 0 {
		return m.Leaders[i]
	}
	return nil
}

// Lower returns the calibration that is the lower of what either
// verdict's map would state (reputation.Calibration.Read: the
// conservative number for a map of no outcome), for planning a validation
// before its first vote: non-decreasing, as each reading is. nil when m
// is nil or no map holds an outcome, so that the plan reads the weighted
// confidence as the stop does before any outcome.
func (m *Maps) Lower() func(float64, float64) float64 {
	if m == nil || !slices.ContainsFunc(m.Calibrations, func(c *reputation.Calibration) bool { return c.Total() > 0 }) {
		return nil
	}
	return func(x, conservative float64) float64 {
		y := 1.0
		for _, c := range m.Calibrations {
			y = min(y, c.Read(x, conservative))
		}
		return y
	}
}

// Coincidence returns the chance that two wrong answers coincide, as m
// read it for an open answer; consensus.DefaultCoincidence otherwise, and
// when m is nil.
func (m *Maps) Coincidence() float64 {
	if m == nil || !m.Open {
		return consensus.DefaultCoincidence
	}
	return m.Coincide
}
