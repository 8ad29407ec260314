package router_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// exactly compares a figure a response states with the documented
// formula recomputed from the response: the same arithmetic.
var exactly = cmpopts.EquateApprox(0, 1e-12)

// checkBlock recomputes a version 3 response's consensus block from the
// block and the runs alone (docs/INTERFACE.md, 6.4 and 6.5): verdicts are
// the runs' labels, agreement the agreeing runs over the votes, and the
// confidence Posterior under majority, or under weighted the credence of
// the runs' weights read on the block's calibration basis, each weight
// the Evidence of its run's reliability and confidence slope. negative
// says that failures are negative evidence.
func checkBlock(t *testing.T, c router.ConsensusResponse, runs []router.Run, negative bool) {
	t.Helper()
	if len(runs) != c.Replicas || len(c.Verdicts) != c.Replicas {
		t.Fatalf("replicas %d, %d verdicts, %d runs", c.Replicas, len(c.Verdicts), len(runs))
	}
	votes := 0
	for i, r := range runs {
		if r.Label != c.Verdicts[i] {
			t.Errorf("run %d labelled %s, verdicts say %s", i, r.Label, c.Verdicts[i])
		}
		if r.Replica != i {
			t.Errorf("run %d says replica %d", i, r.Replica)
		}
		switch r.Label {
		case router.LabelCancelled:
			if r.Weight != nil {
				t.Errorf("cancelled run %d carries weight %v", i, *r.Weight)
			}
		case router.LabelTimeout, router.LabelError:
			if negative {
				votes++
			}
		default:
			votes++
		}
	}
	if c.Agreement == 0 {
		return
	}
	a := len(c.Agreeing)
	if d := cmp.Diff(float64(a)/float64(votes), c.Agreement, exactly); d != "" {
		t.Errorf("agreement is not %d agreeing of %d votes (-want +got):\n%s", a, votes, d)
	}
	win := runs[c.Agreeing[0]].Label
	for _, i := range c.Agreeing {
		if runs[i].Label != win {
			t.Errorf("agreeing run %d labelled %s, the winner %s", i, runs[i].Label, win)
		}
	}
	switch c.Strategy {
	case router.AggregationMajority:
		if d := cmp.Diff(consensus.Posterior(a, votes-a), c.Confidence, exactly); d != "" {
			t.Errorf("confidence is not Posterior(%d, %d) (-want +got):\n%s", a, votes-a, d)
		}
	case router.AggregationWeighted:
		checkWeighted(t, c, runs, a, votes)
	}
}

// checkWeighted recomputes a weighted block (6.5) from its runs.
func checkWeighted(t *testing.T, c router.ConsensusResponse, runs []router.Run, a, votes int) {
	t.Helper()
	if c.Reputation == nil || c.Calibration == nil {
		t.Fatalf("weighted block without reputation or calibration: %+v", c)
	}
	rel := consensus.Reliabilities{Sessions: map[int64]float64{}, Prior: c.Reputation.Prior, Correlation: c.Reputation.Correlation}
	weighed := 0
	scores := map[string]float64{}
	var order []string
	for i, r := range runs {
		if r.Weight == nil {
			continue
		}
		weighed++
		rel.Sessions[int64(r.SessionID)] = *r.Reliability
		w := consensus.Weight(*r.Reliability)
		if r.ConfidenceSlope != nil && r.Label != router.LabelTimeout && r.Label != router.LabelError {
			rel.Confidence = map[int64]consensus.ConfidenceSlope{int64(r.SessionID): *r.ConfidenceSlope}
			w = rel.Evidence(consensus.Vote{Session: int64(r.SessionID), Confidence: r.Confidence})
			rel.Confidence = nil
		}
		if d := cmp.Diff(w, *r.Weight, exactly); d != "" {
			t.Errorf("run %d weight is not its evidence (-want +got):\n%s", i, d)
		}
		g := string(r.Label) + " " + string(r.Output)
		if r.Label == router.LabelTimeout || r.Label == router.LabelError {
			g = "failed"
		}
		if _, ok := scores[g]; !ok {
			order = append(order, g)
		}
		scores[g] += *r.Weight
	}
	if weighed != votes {
		t.Errorf("%d runs carry a weight, %d voted", weighed, votes)
	}
	tempering := consensus.Tempering(weighed, c.Reputation.Correlation)
	if d := cmp.Diff(tempering, c.Reputation.Tempering, exactly); d != "" {
		t.Errorf("tempering (-want +got):\n%s", d)
	}
	s := make([]float64, len(order))
	w := -1
	for i, g := range order {
		s[i] = scores[g]
		if g == string(runs[c.Agreeing[0]].Label)+" "+string(runs[c.Agreeing[0]].Output) {
			w = i
		}
	}
	cred := consensus.Credence(s, w, tempering)
	want := []float64{cred, min(cred, consensus.Posterior(a, votes-a)), c.Calibration.Read()}
	got := []float64{c.Calibration.Uncalibrated, c.Calibration.Conservative, c.Confidence}
	if d := cmp.Diff(want, got, exactly); d != "" {
		t.Errorf("weighted: uncalibrated, conservative, confidence (-want +got):\n%s", d)
		for _, r := range runs {
			t.Logf("run %d %s %s rel %v weight %v slope %+v conf %v", r.Replica, r.Label, r.Output, deref(r.Reliability), deref(r.Weight), r.ConfidenceSlope, r.Confidence)
		}
		t.Logf("block %+v reputation %+v calibration %+v", c, *c.Reputation, *c.Calibration)
	}
}

// verdictOf is a worker that answers v at confidence conf after delay,
// cut short by its context.
func verdictOf(v router.Verdict, conf float64, delay time.Duration) router.Worker {
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		if job.Kind == router.KindDelegate {
			return &router.Result{Output: string(v), Confidence: conf}, nil
		}
		return &router.Result{Verdict: v, Confidence: conf}, nil
	})
}

// TestNumbers_v3Blocks runs version 3 validations and delegations under
// majority and weighted, every disagreement policy, with workers that
// answer fast, slow (cut short by an early quorum), fail or hang, and
// with failures as non-votes and as negative evidence, after outcomes
// were reported, and recomputes each consensus block from its runs.
func TestNumbers_v3Blocks(t *testing.T) {
	workers := []router.Worker{
		verdictOf(router.VerdictValid, 0.9, 0),
		verdictOf(router.VerdictValid, 0.6, 0),
		verdictOf(router.VerdictInvalid, 0.95, 0),
		verdictOf(router.VerdictValid, 0.99, 80*time.Millisecond),
		routertest.Fail(fmt.Errorf("broken")),
		verdictOf(router.VerdictInvalid, 0.3, 80*time.Millisecond),
		routertest.Hang(),
	}
	for _, mode := range []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative} {
		negative := mode == consensus.FailuresNegative
		e, err := router.NewEngine(routertest.Sessions(1, 7, workers...), router.WithReplicaTimeout(200*time.Millisecond),
			router.WithHealth(1000, time.Millisecond), router.WithFailureMode(mode))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			trace := fmt.Sprintf("%032x", i+1+len(mode)*1000)
			ctx := router.WithTraceID(context.Background(), trace)
			agg := router.AggregationWeighted
			if i%3 == 0 {
				agg = router.AggregationMajority
			}
			policy := []router.DisagreementPolicy{router.DisagreeBestEffort, router.DisagreeReturnAll, router.DisagreeFailHard}[i/3%3]
			replicas := []int{3, 5}[i%2]
			c := router.ConsensusRequest{Replicas: replicas, Aggregation: agg, DisagreementPolicy: policy}
			if i%4 == 3 {
				d, err := e.DelegateV3(ctx, &router.DelegateV3Request{
					DelegateTask: router.DelegateTask{Objective: "o", Input: router.NewStringInput("x")}, Consensus: c})
				if err != nil {
					continue
				}
				checkBlock(t, d.Consensus, d.Evidence.Runs, negative)
				continue
			}
			v, err := e.ValidateV3(ctx, &router.ValidateV3Request{ValidateTask: router.ValidateTask{
				Claim: router.Claim{Type: "summary", Output: []byte(`"x"`)}}, Consensus: c})
			if err != nil {
				continue
			}
			checkBlock(t, v.Consensus, v.Evidence.Runs, negative)
			if v.Verdict != "" {
				if err := e.Feedback(ctx, trace, i%5 != 0); err != nil {
					t.Fatalf("Feedback: %v", err)
				}
			}
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
