package reputation

import (
	"math"

	"github.com/vouchkit/vouch/consensus"
)

// Defaults of confidence slopes.
const (
	// SlopePrior is how many votes' worth of evidence a session's
	// confidence slope is shrunk toward 0 by: β is the moment estimate
	// times n/(n+SlopePrior).
	SlopePrior = 50
	// MaxSlope bounds a learned slope.
	MaxSlope = 2
)

// logitRange returns L: a reported confidence's log-odds x lies in
// [-L, L] (consensus.Logit), and is kept as u = (x+L)/(2L) in [0, 1].
func logitRange() float64 { return consensus.Weight(consensus.MaxReliability) }

// slopeKinds are the kinds of a session's confidence records, one per
// moment: Σu, Σu², Σy, Σu·y, each kept as Right the sum and Wrong the
// sum of one less each, so that every record holds the votes counted and
// a horizon scales them alike.
var slopeKinds = [4]string{"confidence u", "confidence uu", "confidence y", "confidence uy"}

// slopeKeys appends the keys of session's confidence records in scope's
// operation.
func slopeKeys(dst []Key, scope Scope, session int64) []Key {
	op := scope.reservedOperation()
	for _, k := range slopeKinds {
		dst = append(dst, Key{Session: session, Operation: op, Kind: k})
	}
	return dst
}

// slopeDeltas returns the evidence that a vote of session that reported
// confidence c was right with probability y, weighing w votes.
func slopeDeltas(dst []Delta, scope Scope, session int64, c, y, w float64) []Delta {
	if !(c > 0) || w == 0 {
		return dst
	}
	l := logitRange()
	u := (consensus.Logit(c) + l) / (2 * l)
	var buf [4]Key
	keys := slopeKeys(buf[:0], scope, session)
	for i, z := range [4]float64{u, u * u, y, u * y} {
		dst = append(dst, Delta{Key: keys[i], Delta: Record{Right: w * z, Wrong: w * (1 - z)}})
	}
	return dst
}

// slopeOf reads a session's confidence slope from its four records: the
// logistic slope of being right on the log-odds of the reported
// confidence, by moments (Cov(x, y) / (Var(x)·ȳ(1−ȳ))), shrunk by
// n/(n+SlopePrior), clamped to [0, MaxSlope]; 0 when the confidence
// does not vary.
func slopeOf(recs []Record) consensus.ConfidenceSlope {
	n := recs[0].Right + recs[0].Wrong
	if !(n > 1) {
		return consensus.ConfidenceSlope{}
	}
	l := logitRange()
	mu, muu, my, muy := recs[0].Right/n, recs[1].Right/n, recs[2].Right/n, recs[3].Right/n
	center := 2*l*mu - l
	varX := 4 * l * l * (muu - mu*mu)
	covXY := 2 * l * (muy - mu*my)
	if !(varX > 1e-6) || !(my > 0 && my < 1) {
		return consensus.ConfidenceSlope{Center: center}
	}
	beta := covXY / (varX * my * (1 - my)) * n / (n + SlopePrior)
	if math.IsNaN(beta) {
		beta = 0
	}
	return consensus.ConfidenceSlope{Slope: min(max(beta, 0), MaxSlope), Center: center}
}
