package reputation

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Defaults of calibration.
const (
	// CalibrationBins is how many equal bins of [0, 1] a calibration map
	// counts outcomes in, by the score the call stated before
	// calibration.
	CalibrationBins = 20
	// DefaultCalibrationPrior is k, the pseudo-outcomes each bin starts
	// from, centred on the mean score of the calls it holds: a bin's rate
	// moves halfway from its scores to what the outcomes showed after k
	// outcomes.
	DefaultCalibrationPrior = 4
)

// A Point is one node of a calibration map: the mean Score (the map's
// input) of the calls of one bin (or of adjacent bins pooled to keep the
// map monotone), the Rate at which they turned out right (the Beta
// posterior mean under the prior of k outcomes at their conservative
// number), and the Outcomes behind it.
type Point struct {
	Score    float64 `json:"score"`
	Rate     float64 `json:"rate"`
	Outcomes float64 `json:"outcomes"`
}

// A Calibration is the map from the confidence a call computed before
// calibration (its score) to the rate at which calls of that score turned
// out right, as the outcomes a host reported showed, for one operation
// and tier. Build it with [Book.Calibration]; the zero Calibration holds
// no outcome.
//
// A call has two numbers before calibration: its score x, the map's
// input (the router's weighted confidence, which tells the sessions
// apart), and its conservative number c, what the call states while no
// outcome is reported (consensus.Conservative: never above an unweighted
// count of the same votes). The map moves a call from c to what outcomes
// show.
//
// # The map
//
// Outcomes are counted in CalibrationBins equal bins of the score. A bin
// that holds n outcomes, r of them right, of calls whose mean score was
// s and mean conservative number c̄, reads the rate (r + k·c̄)/(n + k), k
// the prior (a Beta prior of k pseudo-outcomes centred on what those
// calls stated with no outcome, so that few outcomes move it little).
// The rates of the bins that hold outcomes are then made non-decreasing
// in the score by pooling adjacent violators (weights n + k); each bin
// is then a Point (Score s, Rate its pooled rate). A call of score x and
// conservative number c reads:
//
//	no points             c (uncalibrated)
//	between two points    the straight line between them at x
//	beyond the outermost  x shifted by that point's Rate - Score
//
// clamped to [0, 1]. The map is continuous and non-decreasing in x, and
// maps [0, 1] into [0, 1]. [Interpolate] reads a score from the points
// alone, so anyone holding the points a response names recomputes its
// confidence. A call whose conservative number says more than its score
// reads c below the lowest point, at most that point's Rate
// ([Calibration.HeldBasis]); [Basis.Read] recomputes either reading.
type Calibration struct {
	// Tier names the map (a trust tier, or a name for a router's
	// aggregation).
	Tier string
	// Prior is k (see the type doc); 0 means DefaultCalibrationPrior.
	Prior float64
	// Outcomes holds each bin's outcomes: Right those that turned out
	// right, Wrong those that did not.
	Outcomes [CalibrationBins]Record
	// Scores holds each bin's scores: Right their sum, Wrong the sum of
	// one less each; Right + Wrong equals the bin's outcomes, so that a
	// horizon scales both records alike.
	Scores [CalibrationBins]Record
	// Conservative holds each bin's conservative numbers, as Scores
	// holds its scores. A bin whose record is empty (outcomes reported
	// before the map kept them) centres its prior on its scores.
	Conservative [CalibrationBins]Record
}

// Bin returns the bin of score x: floor(x·CalibrationBins), the top bin
// holding 1, and scores out of [0, 1] the outermost bins.
func Bin(x float64) int {
	if !(x > 0) { // NaN too
		return 0
	}
	return min(int(x*CalibrationBins), CalibrationBins-1)
}

// Total returns how many outcomes the map holds.
func (c *Calibration) Total() float64 {
	var n float64
	for _, r := range c.Outcomes {
		n += r.Right + r.Wrong
	}
	return n
}

// Points returns the map's nodes in increasing Score (see the type doc):
// one per bin holding outcomes, none when no outcome was reported.
func (c *Calibration) Points() []Point {
	k := c.prior()
	type block struct {
		rate, weight float64
		first, last  int // points pooled into the block
	}
	var pts []Point
	if c.Total() > 0 {
		pts = make([]Point, 0, CalibrationBins)
	}
	var blockBuf [CalibrationBins]block
	blocks := blockBuf[:0]
	for b := range c.Outcomes {
		score, rate, ok := c.bin(b)
		if !ok {
			continue
		}
		n := c.Outcomes[b].Right + c.Outcomes[b].Wrong
		pts = append(pts, Point{Score: score, Rate: rate, Outcomes: n})
		blocks = append(blocks, block{rate: rate, weight: n + k, first: len(pts) - 1, last: len(pts) - 1})
		// Pool adjacent violators: merge while the last block's rate
		// is below the one before it.
		for len(blocks) > 1 {
			x, y := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if x.rate <= y.rate {
				break
			}
			w := x.weight + y.weight
			blocks = append(blocks[:len(blocks)-2], block{rate: (x.rate*x.weight + y.rate*y.weight) / w, weight: w, first: x.first, last: y.last})
		}
	}
	for _, bl := range blocks {
		for i := bl.first; i <= bl.last; i++ {
			pts[i].Rate = min(max(bl.rate, 0), 1)
		}
	}
	return pts
}

func (c *Calibration) prior() float64 {
	if c.Prior == 0 {
		return DefaultCalibrationPrior
	}
	return c.Prior
}

// bin returns bin b's mean score and its rate before pooling: the Beta
// posterior of its outcomes under k pseudo-outcomes centred on the bin's
// mean conservative number (its mean score where none was kept); false
// for a bin of no outcome.
func (c *Calibration) bin(b int) (score, rate float64, ok bool) {
	o, s := c.Outcomes[b], c.Scores[b]
	n := o.Right + o.Wrong
	if !(n > 0) || !(s.Right+s.Wrong > 0) {
		return 0, 0, false
	}
	score = s.Right / (s.Right + s.Wrong)
	centre := score // outcomes reported before conservative numbers were kept
	if c := c.Conservative[b]; c.Right+c.Wrong > 0 {
		centre = c.Right / (c.Right + c.Wrong)
	}
	k := c.prior()
	return score, (o.Right + k*centre) / (n + k), true
}

// Apply returns the calibrated number of score x and the points it was
// read between (one or two; see the type doc), or x itself and no point
// when the map holds no outcome.
func (c *Calibration) Apply(x float64) (float64, []Point) {
	pts := c.Points()
	switch {
	case len(pts) == 0:
		return Interpolate(nil, x), nil
	case x <= pts[0].Score || math.IsNaN(x): // NaN reads as Interpolate reads it
		pts = pts[:1]
	case x >= pts[len(pts)-1].Score:
		pts = pts[len(pts)-1:]
	default:
		i := 1
		for pts[i].Score < x {
			i++
		}
		pts = pts[i-1 : i+1]
	}
	return Interpolate(pts, x), pts
}

// Interpolate reads score x on the points a calibrated confidence names
// (as Calibration.Apply returns them): x itself with no point, x shifted
// by Rate - Score of a single point, the straight line through two
// points (the first point's Rate when their scores are equal), clamped
// to [0, 1]. With more than two points it reads the two around x.
func Interpolate(points []Point, x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	var y float64
	switch n := len(points); {
	case n == 0:
		y = x
	case n == 1 || x <= points[0].Score:
		y = x + points[0].Rate - points[0].Score
	case x >= points[n-1].Score:
		y = x + points[n-1].Rate - points[n-1].Score
	default:
		i := 1
		for points[i].Score < x {
			i++
		}
		a, b := points[i-1], points[i]
		y = a.Rate
		if b.Score > a.Score {
			y += (x - a.Score) * (b.Rate - a.Rate) / (b.Score - a.Score)
		}
	}
	return min(max(y, 0), 1)
}

// calibrationKeys returns the keys of the map of tier in scope's
// operation: each bin's outcomes, then each bin's scores, then each
// bin's conservative numbers. They are records of the panel (Session
// PanelSession) under a kind no claim type takes. The Book keeps them
// once built; the caller must not change them.
func (b *Book) calibrationKeys(scope Scope, tier string) []Key {
	op := scope.reservedOperation()
	type name struct{ op, tier string }
	if keys, ok := b.calKeys.Load(name{op, tier}); ok {
		return keys.([]Key)
	}
	keys := make([]Key, 0, calibrationRecords)
	for _, suffix := range []string{"", " score", " conservative"} {
		for bin := range CalibrationBins {
			keys = append(keys, Key{Session: PanelSession, Operation: op, Kind: fmt.Sprintf("calibration %s %02d%s", tier, bin, suffix)})
		}
	}
	b.calKeys.Store(name{op, tier}, keys)
	return keys
}

// Calibration returns the calibration map of tier in scope's operation,
// as the outcomes reported through Report built it (see [Calibration]).
func (b *Book) Calibration(ctx context.Context, scope Scope, tier string) (*Calibration, error) {
	cs, err := b.Calibrations(ctx, scope, tier)
	if err != nil {
		return nil, err
	}
	return cs[0], nil
}

// calibrationRecords is how many records one calibration map keeps.
const calibrationRecords = 3 * CalibrationBins

// Calibrations returns the calibration maps of tiers in scope's
// operation, in their order, read from the store at once.
func (b *Book) Calibrations(ctx context.Context, scope Scope, tiers ...string) ([]*Calibration, error) {
	if err := scope.check(); err != nil {
		return nil, err
	}
	buf := pooled[Key](&b.keyBufs)
	defer b.keyBufs.Put(buf)
	*buf = b.appendCalibrationKeys((*buf)[:0], scope, tiers)
	recs, err := b.store.Load(ctx, *buf)
	if err != nil {
		return nil, err
	}
	return b.calibrationsOf(tiers, recs), nil
}

// appendCalibrationKeys appends to dst the keys of the maps of tiers in
// scope's operation, in their order.
func (b *Book) appendCalibrationKeys(dst []Key, scope Scope, tiers []string) []Key {
	for _, tier := range tiers {
		dst = append(dst, b.calibrationKeys(scope, tier)...)
	}
	return dst
}

// calibrationsOf returns the maps of tiers from recs, the records of
// appendCalibrationKeys.
func (b *Book) calibrationsOf(tiers []string, recs []Record) []*Calibration {
	cs := make([]*Calibration, len(tiers))
	for i, tier := range tiers {
		c := &Calibration{Tier: tier, Prior: b.opts.CalibrationPrior}
		recs := recs[calibrationRecords*i:]
		copy(c.Outcomes[:], recs[:CalibrationBins])
		copy(c.Scores[:], recs[CalibrationBins:2*CalibrationBins])
		copy(c.Conservative[:], recs[2*CalibrationBins:calibrationRecords])
		cs[i] = c
	}
	return cs
}

// A Call is what a [Ledger] remembers of a call for a later report on
// it: its scope, its ballots, the calibration map (Tier), score and
// conservative number its confidence was read from, and the answer its
// ballots backed. An empty Tier means
// a call whose confidence is not calibrated.
type Call struct {
	Scope        Scope
	Ballots      []Ballot
	Tier         string
	Score        float64
	Conservative float64
	// Label is the answer the call's winning votes cast, against which
	// a host's report of the true answer is read (a validation's
	// verdict: trust.Service.FeedbackVerdict); empty when the caller
	// keeps none.
	Label string
	// At is when the call was made: a report on it counts for the
	// Book's report window after it (Options.ReportWindow). A Ledger
	// remembers a call of zero At as made when it remembers it. A call
	// rebuilt from its receipt must name the time the call remembered
	// names, to the millisecond, as the receipt's issue time does in
	// trust.Service: what was reported on a call is kept under it (see
	// Ledger.Report).
	At time.Time
	// ID is the id the call was made under (such as its trace id),
	// which what was reported on it is kept under (see Ledger.Report);
	// empty means the id a Ledger remembers it under. A call a Ledger
	// remembers under another id names its own here, so that its
	// report counts once with a report on it under that id: trust.Service
	// so remembers a call rebuilt from its receipt whose trace id the
	// caller reused for a later call.
	ID string
}

// reportDeltas returns the evidence a report that call was right (or
// wrong) adds, each count multiplied by sign (-1 withdraws it): the
// sessions' as Feedback adds it, and when call names a Tier, one outcome
// at call.Score, with its conservative number, in that calibration map.
func (b *Book) reportDeltas(call Call, right bool, sign float64) []Delta {
	deltas := b.feedbackDeltas(call.Scope, call.Ballots, right, sign)
	if call.Tier == "" || math.IsNaN(call.Score) {
		return deltas
	}
	x := min(max(call.Score, 0), 1)
	c := min(max(call.Conservative, 0), 1)
	if math.IsNaN(c) {
		c = x
	}
	bin := Bin(x)
	keys := b.calibrationKeys(call.Scope, call.Tier)
	var o Record
	if right {
		o.Right = sign
	} else {
		o.Wrong = sign
	}
	return append(deltas,
		Delta{Key: keys[bin], Delta: o},
		Delta{Key: keys[CalibrationBins+bin], Delta: Record{Right: sign * x, Wrong: sign * (1 - x)}},
		Delta{Key: keys[2*CalibrationBins+bin], Delta: Record{Right: sign * c, Wrong: sign * (1 - c)}})
}

// Bases of a calibrated confidence ([Basis].Basis).
const (
	// BasisUncalibrated: no outcome was reported in the map, and the
	// confidence is the conservative number.
	BasisUncalibrated = "uncalibrated"
	// BasisOutcomes: the confidence is read on the map the reported
	// outcomes built.
	BasisOutcomes = "outcomes"
	// BasisHeld: the call's score lies below every point of the map, and
	// the confidence is its conservative number held at most the lowest
	// point's Rate ([Calibration.HeldBasis]).
	BasisHeld = "held"
)

// A Basis is what a calibrated confidence was read from, as a response
// states it: the map (Tier), how many outcomes it holds, the call's score
// (Uncalibrated) and conservative number, and the points it was read
// between, so that the confidence is recomputed as Conservative with no
// point and Interpolate(Points, Uncalibrated) with points ([Basis.Read]).
type Basis struct {
	// Tier names the calibration map.
	Tier string `json:"tier"`
	// Basis is BasisUncalibrated, BasisOutcomes or BasisHeld.
	Basis string `json:"basis"`
	// Outcomes counts the outcomes the map holds (fractional once the
	// horizon scales them).
	Outcomes float64 `json:"outcomes"`
	// Uncalibrated is the call's score, the map's input (the weighted
	// confidence).
	Uncalibrated float64 `json:"uncalibrated"`
	// Conservative is the number the call states with no outcome (see
	// consensus.Conservative).
	Conservative float64 `json:"conservative"`
	// Points are the map's points the confidence was read between.
	Points []Point `json:"points"`
}

// Calibrate returns the calibrated number of a call of scope whose score
// and conservative number are x and c, on the map of tier, and its
// basis. On a store error it returns c, uncalibrated, and the error.
func (b *Book) Calibrate(ctx context.Context, scope Scope, tier string, x, c float64) (float64, Basis, error) {
	m, err := b.Calibration(ctx, scope, tier)
	if err != nil {
		return c, Basis{Tier: tier, Basis: BasisUncalibrated, Uncalibrated: x, Conservative: c, Points: []Point{}}, err
	}
	y, basis := m.Basis(x, c)
	return y, basis, nil
}

// Read returns the calibrated number of a call of score x and
// conservative number c: c with no outcome in the map, else x as Apply
// reads it.
func (c *Calibration) Read(x, conservative float64) float64 {
	y, pts := c.Apply(x)
	if len(pts) == 0 {
		return conservative
	}
	return y
}

// Basis returns the calibrated number of a call of score x and
// conservative number c, as Read does, and its basis.
func (c *Calibration) Basis(x, conservative float64) (float64, Basis) {
	basis := Basis{Tier: c.Tier, Basis: BasisUncalibrated, Uncalibrated: x, Conservative: conservative, Points: []Point{}}
	y, pts := c.Apply(x)
	if len(pts) == 0 {
		return conservative, basis
	}
	basis.Basis, basis.Outcomes, basis.Points = BasisOutcomes, c.Total(), pts
	return y, basis
}

// HeldBasis is Basis for a call whose conservative number says more than
// its score where the map holds no outcome: a score below the map's
// lowest point reads the conservative number, at most that point's Rate
// (BasisHeld), rather than the score shifted by that point's error.
// Anywhere else it reads as Basis does. It keeps the map non-decreasing
// in the score: no call below the lowest point states more than that
// point's calls turned out right.
//
// An open answer's score is the count of its runs (consensus.Posterior),
// which reads two runs that agree among five that scatter as a
// minority, while its conservative number, the plurality's posterior,
// counts how rarely wrong answers coincide: reports of answered calls,
// where such pairs seldom answered, leave the map no point that low.
func (c *Calibration) HeldBasis(x, conservative float64) (float64, Basis) {
	y, basis := c.Basis(x, conservative)
	if len(basis.Points) > 0 && x < basis.Points[0].Score {
		basis.Basis, basis.Points = BasisHeld, basis.Points[:1]
		y = basis.Read()
	}
	return y, basis
}

// Read recomputes the confidence b states: Conservative with no point;
// with BasisHeld, Conservative at most the first point's Rate, clamped to
// [0, 1]; else Interpolate(Points, Uncalibrated).
func (b Basis) Read() float64 {
	switch {
	case len(b.Points) == 0:
		return b.Conservative
	case b.Basis == BasisHeld:
		return min(max(b.Conservative, 0), b.Points[0].Rate, 1)
	}
	return Interpolate(b.Points, b.Uncalibrated)
}
