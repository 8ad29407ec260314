package trust

import (
	"context"
	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust/internal/decide"
)

// A scopeReading is what a call read of its scope's reputation, in one
// store read (reputation.Book.Snapshot). First, the calibration maps its
// confidence is read on: for a validation one per verdict
// (reputation.Calibration, named "<tier>/VALID" and "<tier>/INVALID"),
// since a panel's VALID and its INVALID are right at different rates
// (each map on its own: a verdict of no outcome states the conservative
// number, whatever the other shows); for a delegation the one map of its
// tier (decide.Rules.CalibrationTier). Then, for adaptive, the reliabilities it ranks
// its candidates by, and for a validation the leader among them with the
// maps of the verdicts a leader gives alone (LeaderCalibrationSuffix),
// or for a tier of one router call the reliabilities of every session the
// router may run and the router's own map (router.CalibrationTier); and
// for an open answer, the chance that two wrong answers coincide.
type scopeReading struct {
	maps     decide.Maps                 // the calibration maps and the coincidence
	rel      consensus.Reliabilities     // of the sessions adaptive ranks, or one router call may run
	evidence map[int64]reputation.Record // behind rel
	router   *reputation.Calibration     // router.CalibrationTier's, when read for one router call
	lead     reputation.Lead
	leads    bool
}

// tables returns the maps c read, for the rules of package decide; nil
// when c is nil.
func (c *scopeReading) tables() *decide.Maps {
	if c == nil {
		return nil
	}
	return &c.maps
}

// handedCoincidence is the coincidence c read for an open answer, or 0
// when it read none (router.Reading.Coincidence,
// reputation.Book.LearnAt); c may be nil.
func (c *scopeReading) handedCoincidence() float64 {
	if c == nil || !c.maps.Open {
		return 0
	}
	return c.maps.Coincide
}

// handed returns ctx carrying what c read for the router calls of
// adaptive's runs: the reliabilities and evidence of its candidates
// (router.WithReading), so that the engine reads them no more, and the
// word that the service calibrates the tally itself
// (router.WithoutCalibration), so that the engine reads no map of its
// own. ctx is returned unchanged when c is nil.
func (c *scopeReading) handed(ctx context.Context, req *Request) context.Context {
	if c == nil {
		return ctx
	}
	if len(c.evidence) > 0 {
		ctx = router.WithReading(ctx, router.Reading{Scope: scope(req), Reliabilities: c.rel, Evidence: c.evidence, Coincidence: c.handedCoincidence()})
	}
	return router.WithoutCalibration(ctx)
}

// handedCall returns ctx carrying what c read for the one router call
// of a fast, safe or oracle call (router.WithReading): the reliabilities
// and evidence of the sessions it may run and the router's map of
// weighted calls, so that the engine reads nothing of its book. ctx is
// returned unchanged when c is nil.
func (c *scopeReading) handedCall(ctx context.Context, req *Request) context.Context {
	if c == nil {
		return ctx
	}
	return router.WithReading(ctx, router.Reading{Scope: scope(req), Reliabilities: c.rel, Evidence: c.evidence, Calibration: c.router, Coincidence: c.handedCoincidence()})
}

// readScope reads in one store read (reputation.Book.Snapshot) the
// calibration maps of req's calls in its scope, the reliabilities of the
// sessions adaptive ranks, for a validation the leader among leaderAmong
// with the maps of the verdicts it gives alone (none: no leader asked
// for), and for an open answer the chance that two wrong answers coincide
// (scopeReading); nil when the service keeps no reputation or the store
// fails (logged): the confidence is then uncalibrated, the candidates
// keep their rotation, no session leads and the coincidence is the
// default.
func (s *Service) readScope(ctx context.Context, req *Request, ranks, leaderAmong []int64) *scopeReading {
	return s.read(ctx, req, ranks, leaderAmong, false)
}

// readCall reads, for a fast, safe or oracle call, what readScope reads
// with the reliabilities of every session the router may run the call
// on (sessionIDs) and the router's map of weighted calls
// (router.CalibrationTier), in the same store read, for handedCall.
func (s *Service) readCall(ctx context.Context, req *Request) *scopeReading {
	if s.keep == nil {
		return nil
	}
	return s.read(ctx, req, s.sessionIDs(ctx), nil, true)
}

// sessionIDs returns the sessions the router may run a call of the
// service on: the pool (WithSessionPool), or else every session the
// router reports through router.StatusReporter, whatever its health;
// nil when it reports none.
func (s *Service) sessionIDs(ctx context.Context) []int64 {
	var ids []int64
	for _, id := range s.pool {
		ids = append(ids, int64(id))
	}
	if sr, ok := s.router.(router.StatusReporter); ok && len(ids) == 0 {
		if st, err := sr.Status(ctx); err == nil {
			for _, ss := range st.Sessions {
				ids = append(ids, int64(ss.ID))
			}
		}
	}
	return ids
}

// read is readScope, and with routerMap the router's map of weighted
// calls as well (readCall).
func (s *Service) read(ctx context.Context, req *Request, ranks, leaderAmong []int64, routerMap bool) *scopeReading {
	if s.keep == nil {
		return nil
	}
	rules := s.rules(req)
	c := &scopeReading{maps: decide.Maps{Open: rules.Open()}}
	m := &c.maps
	var tiers []string
	if req.Mode == ModeDelegation {
		tiers = []string{rules.CalibrationTier("")}
		leaderAmong = nil // an open answer's dissent is not known right
	} else {
		m.Labels = []consensus.Label{consensus.Label(router.VerdictValid), consensus.Label(router.VerdictInvalid)}
		tiers = []string{rules.CalibrationTier(m.Labels[0]), rules.CalibrationTier(m.Labels[1])}
		if len(leaderAmong) > 0 {
			tiers = append(tiers, tiers[0]+LeaderCalibrationSuffix, tiers[1]+LeaderCalibrationSuffix)
		}
	}
	if routerMap {
		tiers = append(tiers, router.CalibrationTier)
	}
	snap, err := s.keep.Reputation().Snapshot(ctx, scope(req), reputation.SnapshotRequest{Sessions: ranks, Leader: leaderAmong, Tiers: tiers, Coincidence: m.Open})
	if err != nil {
		s.logger.WarnContext(ctx, "trust: reading the reputation of the call's scope; the confidence is uncalibrated, the sessions keep their rotation and none leads", "error", err)
		return nil
	}
	n := max(len(m.Labels), 1) // the verdicts' maps, or the tier's
	maps := snap.Calibrations
	if routerMap {
		c.router, maps = maps[len(maps)-1], maps[:len(maps)-1]
	}
	m.Calibrations = maps[:n]
	if len(maps) > n {
		m.Leaders = maps[n:]
	}
	c.rel, c.evidence = snap.Reliabilities, snap.Evidence
	c.lead, c.leads, m.Coincide, m.Records = snap.Lead, snap.Leads, snap.Coincidence, snap.Records
	return c
}
