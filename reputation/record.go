package reputation

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// ErrInvalid means a key, delta, prior or horizon is out of range: a
// negative session, an operation or kind that is not UTF-8, holds a NUL
// byte or is longer than MaxNameLen, a count that is NaN, infinite or
// beyond MaxCount, a prior count or horizon that is negative.
var ErrInvalid = errors.New("reputation: invalid input")

// PanelSession is the Session of the panel's record: the figures of every
// pair of sessions that voted in one call, from which a [Book] measures
// how far the sessions' errors go together (the correlation ρ that the
// [Book] doc describes).
// Sessions that vote have positive ids.
const PanelSession int64 = 0

// A Key names one record: a session's reliability, overall or on one
// operation and kind of claim. Its Operation and Kind are UTF-8 without
// NUL bytes, each at most MaxNameLen bytes: every Store keeps such a key
// and refuses any other alike (ErrInvalid).
type Key struct {
	// Session is the session's id: positive for a session, PanelSession
	// for the panel's record.
	Session int64
	// Operation is the operation the votes were cast on (such as
	// "validate_v3"); "" means every operation.
	Operation string
	// Kind is the kind of claim (such as a validation's claim type);
	// "" means every kind. A key with a Kind has an Operation.
	Kind string
}

// check reports what is wrong with k.
func (k Key) check() error { return k.checkAfter(new(Key)) }

// checkAfter is check for a key that follows last among the keys of one
// batch, which was found right: names equal to last's are not checked
// again (a batch's keys mostly share theirs), and last takes k's names
// once they are found right.
func (k Key) checkAfter(last *Key) error {
	switch {
	case k.Session < 0:
		return fmt.Errorf("%w: session %d is negative", ErrInvalid, k.Session)
	case k.Kind != "" && k.Operation == "":
		return fmt.Errorf("%w: key of session %d has kind %q but no operation", ErrInvalid, k.Session, k.Kind)
	}
	if k.Operation != last.Operation {
		if err := checkName("operation", k.Operation); err != nil {
			return fmt.Errorf("key of session %d: %w", k.Session, err)
		}
		last.Operation = k.Operation
	}
	if k.Kind != last.Kind {
		if err := checkName("kind", k.Kind); err != nil {
			return fmt.Errorf("key of session %d: %w", k.Session, err)
		}
		last.Kind = k.Kind
	}
	return nil
}

// checkName reports a name of a key (what it is) that is not UTF-8, holds
// a NUL byte or is longer than MaxNameLen: what some Store cannot keep.
func checkName(what, name string) error {
	switch {
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %s of %d bytes is longer than %d", ErrInvalid, what, len(name), MaxNameLen)
	case !utf8NoNUL(name):
		return fmt.Errorf("%w: %s %q is not UTF-8 without NUL bytes", ErrInvalid, what, name)
	}
	return nil
}

// utf8NoNUL reports whether s is UTF-8 without a NUL byte, in one pass
// over the ASCII names that keys hold.
func utf8NoNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 0:
			return false
		case c >= utf8.RuneSelf:
			return utf8.ValidString(s[i:]) && strings.IndexByte(s[i:], 0) < 0
		}
	}
	return true
}

// A Record holds the evidence about one key. The zero Record is a key with
// no evidence.
//
// For a session, Right is the evidence that its votes were right and Wrong
// the evidence that they were wrong. For the panel's record (Session
// PanelSession), Right sums the disagreements that pairs of voters would
// show if their errors were independent, and Wrong the disagreements they
// showed.
type Record struct {
	Right float64
	Wrong float64
}

// checkDelta reports a count that is NaN or larger than MaxCount either
// way. A negative count withdraws evidence (see Record.Add).
func (r Record) checkDelta() error {
	for _, v := range [2]float64{r.Right, r.Wrong} {
		if !(math.Abs(v) <= MaxCount) {
			return fmt.Errorf("%w: count %v is not a number within ±%g", ErrInvalid, v, MaxCount)
		}
	}
	return nil
}

// Add returns r with the counts of d added, a count that would fall below
// zero being zero (a negative count withdraws evidence), then, when
// horizon is positive and the counts sum to more than horizon, both
// scaled by horizon/sum so that they sum to horizon. A horizon of 0 keeps
// every count. Every Store applies deltas with exactly this arithmetic,
// in float64.
func (r Record) Add(d Record, horizon float64) Record {
	r.Right = max(r.Right+d.Right, 0)
	r.Wrong = max(r.Wrong+d.Wrong, 0)
	if sum := r.Right + r.Wrong; horizon > 0 && sum > horizon {
		f := horizon / sum
		r.Right *= f
		r.Wrong *= f
	}
	return r
}

// Reliability returns the mean of the Beta distribution of r's counts
// added to p: (Right+p.Right) / (Right+Wrong+p.Right+p.Wrong). The zero
// Record reads p.Mean().
func (r Record) Reliability(p Prior) float64 {
	return (r.Right + p.Right) / (r.Right + r.Wrong + p.Right + p.Wrong)
}

// A Prior is the pseudo-counts every record starts from: the reliability a
// session is given before any evidence, and how many votes that belief is
// worth.
type Prior struct {
	Right float64
	Wrong float64
}

// DefaultPrior returns Beta(4, 1): a new session is taken to be right 80% of
// the time, a belief worth five votes.
func DefaultPrior() Prior { return Prior{Right: 4, Wrong: 1} }

// DefaultOutcomePrior returns Beta(32, 8): the same mean, 0.8, worth 40 votes,
// ten reported outcomes at DefaultFeedbackWeight. It is the prior of a
// Book that learns from reported outcomes alone (the default): with no
// agreement evidence to fill a record, a prior worth five votes would let
// one wrong outcome take a session from 0.8 to below one half, where its
// vote weighs nothing (consensus.Weight). Measured on the real-data world
// families of examples/accuracy with 5% of outcomes reported, it keeps
// safe's accuracy where it was before outcomes on the numeric and
// MMLU-Pro panels (safe on GSM8K mid-size panels: 62.0% with the
// five-vote prior, 88.3% with this one; docs/ACCURACY.md).
func DefaultOutcomePrior() Prior { return Prior{Right: 32, Wrong: 8} }

// Mean returns the prior's reliability, Right / (Right + Wrong).
func (p Prior) Mean() float64 { return p.Right / (p.Right + p.Wrong) }

// check reports a prior whose counts are not positive or above MaxCount.
func (p Prior) check() error {
	for _, v := range [2]float64{p.Right, p.Wrong} {
		if !(v > 0 && v <= MaxCount) {
			return fmt.Errorf("%w: prior count %v is not a positive number up to %g", ErrInvalid, v, MaxCount)
		}
	}
	return nil
}

// MaxCount bounds every count a [Book] is configured with (a Prior's
// counts, a horizon, a feedback weight) and every count of a [Delta]: sums
// of such counts stay far from overflow, so that every reliability read is
// a number.
const MaxCount = 1e15

// MaxNameLen bounds the length in bytes of a [Key]'s Operation and of its
// Kind, so that every Store keeps any key it is given (a database index
// holds a few kilobytes).
const MaxNameLen = 1024

// DefaultHorizon is the evidence a record keeps before it forgets: about
// the last 500 votes.
const DefaultHorizon = 500

// checkHorizon reports a horizon that is negative, NaN or above MaxCount.
func checkHorizon(h float64) error {
	if !(h >= 0 && h <= MaxCount) {
		return fmt.Errorf("%w: horizon %v is not a number in [0, %g]", ErrInvalid, h, MaxCount)
	}
	return nil
}

// A Delta is evidence to add to one key's record.
type Delta struct {
	Key   Key
	Delta Record
}

// CheckDeltas reports the first delta whose key or counts are out of
// range, or a horizon out of range, as an error wrapping ErrInvalid. A
// Store calls it before applying any delta.
func CheckDeltas(horizon float64, deltas []Delta) error {
	if err := checkHorizon(horizon); err != nil {
		return err
	}
	var last Key
	for i, d := range deltas {
		if err := d.Key.checkAfter(&last); err != nil {
			return fmt.Errorf("deltas[%d]: %w", i, err)
		}
		if err := d.Delta.checkDelta(); err != nil {
			return fmt.Errorf("deltas[%d]: %w", i, err)
		}
	}
	return nil
}

// CheckKeys reports the first key out of range, as an error wrapping
// ErrInvalid.
func CheckKeys(keys []Key) error {
	var last Key
	for i, k := range keys {
		if err := k.checkAfter(&last); err != nil {
			return fmt.Errorf("keys[%d]: %w", i, err)
		}
	}
	return nil
}
