package trust

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// An examined call is what an exam's own call knows of the call it
// examines: the verdict each of its sessions gave, and the seed of the
// order the exam asks the pool in.
type examined struct {
	known map[router.SessionID]router.Run
	seed  uint64
}

// examOf returns what ctx, an exam's own call, knows of the call it
// examines; nil for any other call.
func examOf(ctx context.Context) *examined {
	x, _ := ctx.Value(examining{}).(*examined)
	return x
}

// examinedCall returns what an exam of c, the ledger's entry of a
// validation, knows of it: each verdict its ballots record (Backed: the
// call's winning verdict; Opposed: the other one), as the run an exam
// counts in place of asking the session again.
func examinedCall(c reputation.Call, seed uint64) *examined {
	x := &examined{known: make(map[router.SessionID]router.Run, len(c.Ballots)), seed: seed}
	for _, b := range c.Ballots {
		v := router.Verdict(c.Label)
		switch {
		case b.Backed:
		case b.Opposed:
			v = trueVerdict(c.Label, false) // the other verdict
		default:
			continue
		}
		id := router.SessionID(b.Session)
		x.known[id] = router.Run{SessionID: id, Label: router.Label(v), Confidence: b.Confidence}
	}
	return x
}

// examStream is the stream of the generator that draws an exam's order.
const examStream = 0x6578616d // "exam"

// examRuns asks req's claim of the service's sessions for an exam (see
// Service.examine), as one oracle call of five replicas would count its
// votes, for fewer runs: in an order drawn uniformly at random (the order
// in which the replicas of one call arrive is their latencies', not
// their reputation's), one at a time, until two verdicts disagree or
// five sessions have voted. Asking two at once would save one run's
// wait, but the order in which their calls reached the router would then
// be the scheduler's, and an engine that keeps reputation counts each
// run towards its session's share of the latest runs in that order. A
// session the examined call ran is not asked again: the verdict it gave
// there counts, as it was cast. Each run is a router call of one replica
// at the oracle tier. An exam whose every run failed fails, with the
// first run's error. It returns no step when the service knows fewer
// sessions than an oracle call runs (or none: the router reports none
// and the service names no pool): the exam is then one oracle call,
// which such a pool refuses.
func (s *Service) examRuns(ctx context.Context, req *Request, x *examined) ([]stepResult, *scopeReading, error) {
	cands := s.sessions(ctx)
	if s.session != 0 && !slices.ContainsFunc(cands, func(c candidate) bool { return c.id == s.session }) {
		cands = append(cands, candidate{id: s.session})
	}
	if len(cands) < plan(PolicyOracle).replicas {
		return nil, nil, nil // too few sessions for the oracle tier: its call refuses the exam
	}
	rand.New(rand.NewPCG(x.seed, examStream)).Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = int64(c.id)
	}
	cals := s.read(ctx, req, ids, nil, false)
	ctx = cals.handed(ctx, req)
	var steps []stepResult
	var runs []router.Run
	var asked, failed int // the runs asked of the router, and those that failed
	var firstErr error    // the first router error
	tier := func(int) router.Tier { return router.TierOracle }
	for _, c := range cands {
		if len(runs) == consensus.DefaultMaxRuns || split(runs) {
			break
		}
		if r, ok := x.known[c.id]; ok {
			r.Replica = len(runs)
			if cals != nil {
				rel := cals.rel.Of(int64(c.id))
				r.Reliability = &rel
				if cs, ok := cals.rel.Confidence[int64(c.id)]; ok {
					r.ConfidenceSlope = &cs
				}
			}
			runs = append(runs, r)
			st := stepResult{runs: []router.Run{r}, verdicts: []router.Label{r.Label}}
			st.step = newStep("", rung{router.TierOracle, 0, router.DisagreeFailHard}, "", string(r.Label), st)
			steps = append(steps, st)
			continue
		}
		results, errs := s.runBatch(ctx, req, []candidate{c}, tier)
		st, err := oneRun(ctx, req.Mode, results[0], errs[0], c.id, router.TierOracle)
		if err != nil {
			return nil, nil, err
		}
		if firstErr == nil {
			firstErr = errs[0]
		}
		asked++
		if consensus.Label(st.runs[0].Label).Failed() {
			failed++
		}
		st.runs[0].Replica = len(runs)
		runs = append(runs, st.runs[0])
		steps = append(steps, st)
	}
	if asked > 0 && failed == asked && firstErr != nil {
		return nil, nil, fmt.Errorf("trust: every run the exam asked failed: %w", firstErr)
	}
	return steps, cals, nil
}

// split reports whether runs hold two different verdicts.
func split(runs []router.Run) bool {
	var first router.Label
	for _, r := range runs {
		switch l := r.Label; {
		case !twoVerdicts(consensus.Label(l)):
		case first == "":
			first = l
		case l != first:
			return true
		}
	}
	return false
}
