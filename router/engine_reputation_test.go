package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// learnOn runs n version 3 calls of 3 replicas (return_all) on e, claims
// numbered from first.
// agreementBook returns a book that also learns reliabilities from
// agreement (reputation.Options.LearnFromAgreement), with o's other
// options: the tests of what agreement teaches use it.
func agreementBook(t *testing.T, store reputation.Store, o reputation.Options) *reputation.Book {
	t.Helper()
	o.LearnFromAgreement = true
	book, err := reputation.New(store, o)
	if err != nil {
		t.Fatal(err)
	}
	return book
}

func learnOn(t *testing.T, e *router.Engine, first, n int) {
	t.Helper()
	for i := first; i < first+n; i++ {
		req := validateV3(3, router.DisagreeReturnAll)
		req.Claim.Output = json.RawMessage(fmt.Sprintf(`"claim %d"`, i))
		if _, err := e.ValidateV3(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
}

// reportOn runs n weighted calls of five replicas under trace ids and
// reports the outcome of each through Feedback: wrong one call in four,
// so that the calibration map of router.CalibrationTier learns.
func reportOn(t *testing.T, e *router.Engine, first, n int) {
	t.Helper()
	for i := first; i < first+n; i++ {
		req := validateV3(5, router.DisagreeReturnAll)
		req.Claim.Output = json.RawMessage(fmt.Sprintf(`"reported %d"`, i))
		req.Consensus.Aggregation = router.AggregationWeighted
		trace := fmt.Sprintf("%032x", i+1)
		if _, err := e.ValidateV3(router.WithTraceID(context.Background(), trace), req); err != nil {
			var p *router.Error
			if errors.As(err, &p) && (p.Status == http.StatusConflict || p.Status == http.StatusBadGateway) {
				continue // a call its failures refused: no winner to report on
			}
			t.Fatal(err)
		}
		if err := e.Feedback(context.Background(), trace, i%4 != 0); err != nil && !errors.Is(err, router.ErrUnknownCall) { // a call without a winner is not remembered
			t.Fatal(err)
		}
	}
}

// TestEngine_reputationSelection: once the engine has learned, single
// replica calls go to the most reliable sessions first, and no session
// takes more than its share bound of the runs.
func TestEngine_reputationSelection(t *testing.T) {
	e := offEngine(t)
	learnOn(t, e, 0, 300)
	runs := map[router.SessionID]int{}
	const calls = 500
	for i := range calls {
		req := validateV3(1, router.DisagreeBestEffort)
		req.Claim.Output = json.RawMessage(fmt.Sprintf(`"single %d"`, i))
		resp, err := e.ValidateV3(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		runs[resp.Evidence.Runs[0].SessionID]++
	}
	for id, n := range runs {
		if share := float64(n) / calls; share > router.DefaultMaxShare+0.02 {
			t.Errorf("session %d took %.3f of the runs, above the bound %v", id, share, router.DefaultMaxShare)
		}
	}
	if runs[1] <= runs[5] || runs[2] <= runs[5] {
		t.Errorf("runs per session %v: the most reliable sessions (1, 2) should run more than the least (5)", runs)
	}
	if runs[5] == 0 {
		t.Errorf("runs per session %v: exploration never tried session 5", runs)
	}
}

// recompute checks that a weighted response's figures follow from what
// it records: each run's weight from its reliability, the winner as the
// group of largest summed weight, agreement from the agreeing replicas,
// and confidence from the weights and the snapshot's tempering, no higher
// than consensus.Posterior of the votes, read on the calibration points
// the block names.
func recompute(t *testing.T, c router.ConsensusResponse, runs []router.Run, verdict router.Verdict) {
	t.Helper()
	if c.Strategy != router.AggregationWeighted || c.WeightBy != router.WeightByReputation || c.Reputation == nil {
		t.Fatalf("consensus block %+v: want strategy weighted, weight_by reputation and a reputation snapshot", c)
	}
	scores := map[router.Label]float64{}
	votes := 0
	for _, r := range runs {
		if r.Weight == nil {
			continue
		}
		votes++
		if w := consensus.Weight(*r.Reliability); math.Abs(w-*r.Weight) > 1e-12 {
			t.Errorf("run %d: weight %v, but its reliability %v weighs %v", r.Replica, *r.Weight, *r.Reliability, w)
		}
		scores[r.Label] += *r.Weight
	}
	var labels []router.Label
	var ss []float64
	win := -1
	for l, s := range scores {
		if l == router.Label(verdict) {
			win = len(ss)
		}
		labels, ss = append(labels, l), append(ss, s)
	}
	for l, s := range scores {
		if s > scores[router.Label(verdict)] {
			t.Errorf("%s weighs %v, more than the verdict %s's %v", l, s, verdict, scores[router.Label(verdict)])
		}
	}
	if tmp := consensus.Tempering(votes, c.Reputation.Correlation); math.Abs(tmp-c.Reputation.Tempering) > 1e-12 {
		t.Errorf("tempering %v, want %v for %d votes", c.Reputation.Tempering, tmp, votes)
	}
	weighted := consensus.Credence(ss, win, c.Reputation.Tempering)
	conservative := min(weighted, consensus.Posterior(len(c.Agreeing), votes-len(c.Agreeing)))
	cal := c.Calibration
	if cal == nil || cal.Tier != router.CalibrationTier {
		t.Fatalf("calibration %+v, want the basis of tier %q", cal, router.CalibrationTier)
	}
	if math.Abs(cal.Uncalibrated-weighted) > 1e-12 || math.Abs(cal.Conservative-conservative) > 1e-12 {
		t.Errorf("uncalibrated %v and conservative %v, recomputed %v and %v from %v (%v)", cal.Uncalibrated, cal.Conservative, weighted, conservative, ss, labels)
	}
	want := conservative // with no outcome
	if len(cal.Points) > 0 {
		want = reputation.Interpolate(cal.Points, weighted)
	}
	if math.Abs(want-c.Confidence) > 1e-12 || math.Abs(cal.Read()-c.Confidence) > 1e-12 {
		t.Errorf("confidence %v, recomputed %v from %v and %v on %+v", c.Confidence, want, weighted, conservative, cal)
	}
	if (cal.Basis == reputation.BasisUncalibrated) != (len(cal.Points) == 0) || (cal.Outcomes > 0) != (len(cal.Points) > 0) {
		t.Errorf("calibration %+v: basis, outcomes and points disagree", cal)
	}
	if a := float64(len(c.Agreeing)) / float64(votes); math.Abs(a-c.Agreement) > 1e-12 {
		t.Errorf("agreement %v, but %d of %d votes agree", c.Agreement, len(c.Agreeing), votes)
	}
}

func TestEngine_weighted(t *testing.T) {
	e := offEngine(t, router.WithReputation(agreementBook(t, nil, reputation.Options{})))
	learnOn(t, e, 0, 200)
	calibrated := 0
	for i := range 30 {
		if i == 10 {
			reportOn(t, e, 0, 40)
		}
		req := validateV3(5, router.DisagreeReturnAll)
		req.Claim.Output = json.RawMessage(fmt.Sprintf(`"weighted %d"`, i))
		req.Consensus.Aggregation = router.AggregationWeighted
		resp, err := e.ValidateV3(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		recompute(t, resp.Consensus, resp.Evidence.Runs, resp.Verdict)
		if resp.Confidence != resp.Consensus.Confidence {
			t.Errorf("confidence %v, consensus block says %v", resp.Confidence, resp.Consensus.Confidence)
		}
		if b := resp.Consensus.Calibration.Basis; (b == reputation.BasisOutcomes) != (i >= 10) {
			t.Errorf("call %d: basis %q, want %q only once outcomes were reported", i, b, reputation.BasisOutcomes)
		}
		if cal := resp.Consensus.Calibration; cal.Basis == reputation.BasisOutcomes && resp.Confidence != cal.Uncalibrated && resp.Confidence != cal.Conservative {
			calibrated++
		}
	}
	if calibrated == 0 {
		t.Error("no calibrated confidence differs from its number before calibration: calibration was never put to the test")
	}
}

func TestEngine_weightedNeedsReputation(t *testing.T) {
	e := offEngine(t, router.WithReputation(nil))
	req := validateV3(3, router.DisagreeBestEffort)
	req.Consensus.Aggregation = router.AggregationWeighted
	_, err := e.ValidateV3(context.Background(), req)
	p := asError(t, err, http.StatusBadRequest, "invalid_request")
	if len(p.Errors) != 1 || p.Errors[0].Field != "consensus.aggregation" {
		t.Errorf("errors %+v, want one naming consensus.aggregation", p.Errors)
	}
}

// TestEngine_learnsConcurrently: many calls at once, all updating
// session 1's record, lose none of its evidence.
func TestEngine_learnsConcurrently(t *testing.T) {
	store := new(reputation.Memory)
	e := offEngine(t, router.WithReputation(agreementBook(t, store, reputation.Options{Horizon: 1e9})))
	const calls = 60
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			req := validateV3(3, router.DisagreeReturnAll)
			req.Claim.Output = json.RawMessage(fmt.Sprintf(`"claim %d"`, i))
			req.Consensus.SessionPool = []router.SessionID{1, router.SessionID(2 + i%4)}
			req.SessionID = 1
			req.Consensus.Replicas = 1
			if i%2 == 0 {
				req.Consensus.Replicas, req.Consensus.SessionPool = 3, []router.SessionID{1, 2, 3}
			}
			if _, err := e.ValidateV3(context.Background(), req); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	recs, err := store.Load(context.Background(), []reputation.Key{{Session: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// Only the calls of three replicas teach: one vote of evidence each.
	if got := recs[0].Right + recs[0].Wrong; math.Abs(got-calls/2) > 1e-9 {
		t.Errorf("session 1 holds %v votes of evidence after %d calls of three replicas, want %d", got, calls/2, calls/2)
	}
}

func TestEngine_feedback(t *testing.T) {
	e := offEngine(t)
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := router.WithTraceID(context.Background(), trace)
	req := validateV3(3, router.DisagreeReturnAll)
	req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
	resp, err := e.ValidateV3(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	scope := router.Scope(router.KindValidate, "summary")
	before, err := e.Reputation().Reliabilities(context.Background(), scope, []int64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Feedback(context.Background(), trace, false); err != nil {
		t.Fatal(err)
	}
	after, _ := e.Reputation().Reliabilities(context.Background(), scope, []int64{1, 2, 3})
	for _, i := range resp.Consensus.Agreeing {
		id := int64(resp.Evidence.Runs[i].SessionID)
		if !(after.Sessions[id] < before.Sessions[id]-0.05) {
			t.Errorf("session %d backed a wrong outcome: reliability %v before the report, %v after", id, before.Sessions[id], after.Sessions[id])
		}
	}
	if err := e.Feedback(context.Background(), "00000000000000000000000000000001", true); !errors.Is(err, router.ErrUnknownCall) {
		t.Errorf("feedback on an unknown trace id: %v, want ErrUnknownCall", err)
	}
}

// TestBallots_opposed: a validation's vote for the other verdict is
// opposed (right when the outcome is wrong); a vote that backed the
// winner, a failed one and an open answer's dissent are not.
func TestBallots_opposed(t *testing.T) {
	votes := []consensus.Vote{{Session: 1, Label: "VALID"}, {Session: 2, Label: "INVALID"}, {Session: 3, Label: "ERROR"}, {Session: 4, Label: "VALID"}}
	out, err := consensus.Majority{}.Aggregate(votes, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	want := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true}, {Session: 4, Backed: true}}
	if diff := cmp.Diff(want, router.Ballots(out, nil)); diff != "" {
		t.Errorf("validation ballots (-want +got):\n%s", diff)
	}
	open := []consensus.Vote{{Session: 1, Label: "OK", Answer: []byte(`"a"`)}, {Session: 2, Label: "OK", Answer: []byte(`"a"`)}, {Session: 3, Label: "OK", Answer: []byte(`"b"`)}}
	if out, err = (consensus.Majority{}).Aggregate(open, consensus.Policy{}); err != nil {
		t.Fatal(err)
	}
	want = []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3}}
	if diff := cmp.Diff(want, router.Ballots(out, nil)); diff != "" {
		t.Errorf("open answers' ballots (-want +got):\n%s", diff)
	}
}
