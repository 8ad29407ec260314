package router

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// Rank orders ids as version 3 selection would for a call in scope:
// sessions at their share bound last, the others by a draw from what the
// engine knows of each one's reliability (see [Engine.ValidateV3]), and
// one call in [DefaultExploreEvery] the least used first. It returns the
// reliabilities it ranked by. With reputation off it returns ids
// unchanged and zero Reliabilities. Ids the engine does not know keep
// their place at the end, and sessions that nothing tells apart the
// order of ids. It reads the sessions' records once
// (reputation.Book.Evidence), then orders them as [Engine.Order] does.
func (e *Engine) Rank(ctx context.Context, scope reputation.Scope, ids []SessionID) ([]SessionID, consensus.Reliabilities, error) {
	if e.rep == nil {
		return slices.Clone(ids), consensus.Reliabilities{}, nil
	}
	known, _ := e.known(ids)
	r, err := e.read(ctx, scope, known, needs{})
	if err != nil {
		return slices.Clone(ids), r.Reliabilities, err
	}
	return e.Order(ids, r.Reliabilities, r.Evidence), r.Reliabilities, nil
}

// Order orders ids as [Engine.Rank] does, by rel and evidence, the
// reliabilities of the sessions and the evidence behind each that the
// caller read of the call's scope (reputation.Book.Evidence, or
// reputation.Book.Snapshot with the call's other figures), without
// reading the book itself. With reputation off it returns ids unchanged.
//
// When nothing tells the known sessions apart (the same reliability and
// evidence, as before any outcome in the scope) it keeps them in the
// order of ids: the caller's own, which a trust service rotates by one
// place per call as it does with reputation off, so that before any
// outcome its calls run the sessions they would run without reputation.
// Version 3 selection, which picks the sessions itself, rotates them.
func (e *Engine) Order(ids []SessionID, rel consensus.Reliabilities, evidence map[int64]reputation.Record) []SessionID {
	if e.rep == nil {
		return slices.Clone(ids)
	}
	known, rest := e.known(ids)
	if indistinct(known, rel, evidence) {
		e.next.Add(1) // the draws of later calls as if this one had drawn
	} else {
		e.order(known, rel, evidence)
	}
	out := make([]SessionID, 0, len(ids))
	for _, s := range known {
		out = append(out, s.ID)
	}
	return append(out, rest...)
}

// indistinct reports whether nothing tells sessions apart: the same
// reliability and the same evidence behind it.
func indistinct(sessions []*session, rel consensus.Reliabilities, evidence map[int64]reputation.Record) bool {
	for _, s := range sessions {
		id, id0 := int64(s.ID), int64(sessions[0].ID)
		if evidence[id] != evidence[id0] || rel.Of(id) != rel.Of(id0) {
			return false
		}
	}
	return true
}

// known returns the sessions of ids the engine knows, each once, in the
// order of ids, and the other ids.
func (e *Engine) known(ids []SessionID) (known []*session, rest []SessionID) {
	for _, id := range ids {
		if s := e.byID[id]; s != nil && !slices.Contains(known, s) {
			known = append(known, s)
		} else {
			rest = append(rest, id)
		}
	}
	return known, rest
}

// needs names what a call needs of the book beside its sessions'
// reliabilities: the calibration map of a weighted call, and the
// coincidence of wrong answers of a delegation it learns from.
type needs struct{ calibration, coincidence bool }

// callNeeds returns what a version 3 call under c, of job under ctx,
// needs of the book beside its sessions' reliabilities: the map of
// CalibrationTier when it is weighted and calibrates (WithoutCalibration),
// and the coincidence when it is a delegation that teaches (Teaches,
// WithoutLearning).
func callNeeds(ctx context.Context, c *ConsensusRequest, job *Job) needs {
	return needs{
		calibration: c.Aggregation == AggregationWeighted && ctx.Value(calibratesItselfKey{}) == nil,
		coincidence: job.Kind == KindDelegate && Teaches(ctx) && ctx.Value(learnsItselfKey{}) == nil,
	}
}

// read reads what a call in scope over sessions needs of the book in one
// store read (reputation.Book.Snapshot): the sessions' reliabilities and
// the evidence behind each, as reputation.Book.Evidence reads them, and
// what need asks beside them.
func (e *Engine) read(ctx context.Context, scope reputation.Scope, sessions []*session, need needs) (Reading, error) {
	var buf [8]int64 // room enough for most engines
	ids := buf[:0]
	for _, s := range sessions {
		ids = append(ids, int64(s.ID))
	}
	req := reputation.SnapshotRequest{Sessions: ids, Coincidence: need.coincidence}
	if need.calibration {
		req.Tiers = []string{CalibrationTier}
	}
	snap, err := e.rep.Snapshot(ctx, scope, req)
	if err != nil {
		return Reading{}, err
	}
	r := Reading{Scope: scope, Reliabilities: snap.Reliabilities, Evidence: snap.Evidence, Coincidence: snap.Coincidence}
	if need.calibration {
		r.Calibration = snap.Calibrations[0]
	}
	return r, nil
}

// order sorts sessions for selection: those under their share bound
// before those at it, and in each group by a draw from each session's
// reliability (Thompson sampling): the most likely best first, a
// session as often as it may be the best. On an exploring call, the
// least used goes first.
//
// The draw is p + σ·z, z standard normal: p is the session's reliability,
// the mean of a Beta posterior (reputation.Book.Evidence), and σ² =
// p(1−p)/(m+1) its variance, m the outcomes' worth of its evidence
// (its counts over the book's FeedbackWeight, the prior's included).
// Sessions within noise of each other so share the runs, a session with
// little evidence runs until its record tells it apart, and one that
// outcomes show clearly better runs first nearly always. The draws come
// from the engine's call counter, so one sequence of calls orders the
// same way every time. Sessions that nothing tells apart (equal
// reliability and evidence, as before any outcome) draw nothing and keep
// a rotation by one place per call.
func (e *Engine) order(sessions []*session, rel consensus.Reliabilities, counts map[int64]reputation.Record) {
	k := e.next.Add(1) - 1
	if len(sessions) < 2 {
		return
	}
	type ranked struct {
		s    *session
		over bool    // at the share bound
		draw float64 // from the session's reliability
		runs int     // of the latest runs
	}
	var buf [8]ranked // room enough for most engines
	rs := slices.Grow(buf[:0], len(sessions))[:len(sessions)]
	e.usage.mu.Lock()
	total := len(e.usage.ring)
	for i, s := range sessions {
		n := e.usage.counts[s.ID]
		rs[i] = ranked{s: s, over: total >= 10 && float64(n) >= e.maxShare*float64(total), runs: n}
	}
	e.usage.mu.Unlock()
	r := int(k % uint64(len(rs)))
	rs = append(rs[r:], rs[:r]...) // rotated: past the buffer's used part, or a new array
	if !indistinct(sessions, rel, counts) {
		rng := rand.New(rand.NewPCG(k, orderStream))
		fw := e.rep.Options().FeedbackWeight
		for i := range rs {
			id := int64(rs[i].s.ID)
			c, p := counts[id], rel.Of(id)
			sd := math.Sqrt(p * (1 - p) / ((c.Right+c.Wrong)/fw + 1))
			rs[i].draw = p + sd*rng.NormFloat64()
		}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		switch {
		case a.over != b.over:
			if a.over {
				return 1
			}
			return -1
		case a.draw > b.draw:
			return -1
		case a.draw < b.draw:
			return 1
		}
		return 0
	})
	if e.exploreEvery > 0 && k%uint64(e.exploreEvery) == uint64(e.exploreEvery-1) {
		least := 0
		for i, x := range rs {
			if x.runs < rs[least].runs {
				least = i
			}
		}
		x := rs[least]
		copy(rs[1:least+1], rs[:least])
		rs[0] = x
	}
	for i, x := range rs {
		sessions[i] = x.s
	}
}

// orderStream is the stream of the draws of [Engine.order].
const orderStream = 0x6f72646572
