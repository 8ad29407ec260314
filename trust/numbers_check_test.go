package trust_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// exact compares floats a response states and a recomputation of the
// documented formula gives: the same arithmetic, so only the last bits
// may differ.
var exact = cmpopts.EquateApprox(0, 1e-12)

// recount is what a trust response's evidence says, recomputed from the
// evidence alone.
type recount struct {
	answered, failed, cancelled int
	noVote                      int // answers that hold no vote: a numeric delegation's words
	agreeing, against           int
	accepted                    bool
}

// accepted reports whether status names an accepted winner.
func acceptedStatus(s trust.Status) bool {
	switch s {
	case trust.StatusValid, trust.StatusInvalid, trust.StatusNeedsSpec, trust.StatusSellerValid, trust.StatusSellerInvalid:
		return true
	}
	return false
}

// checkNumbers recomputes from resp alone the counts, agreement and
// confidence the documentation defines (docs/INTERFACE.md, 9.2 and 9.3),
// and compares each with what resp states; reputation says whether the
// service runs over a router that keeps reputation. It returns the
// recount for further checks.
func checkNumbers(t *testing.T, resp *trust.Response, reputationOn bool) recount {
	t.Helper()
	ev := resp.Evidence
	var rc recount
	for _, l := range ev.Verdicts {
		switch l {
		case router.LabelCancelled:
			rc.cancelled++
		case router.LabelTimeout, router.LabelError:
			rc.failed++
		default:
			rc.answered++
		}
	}
	got := []int{ev.Launched, ev.Redundancy, ev.Answered, ev.Failed, ev.Cancelled}
	want := []int{len(ev.Verdicts), len(ev.Verdicts), rc.answered, rc.failed, rc.cancelled}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("launched, redundancy, answered, failed, cancelled against the verdicts (-want +got):\n%s", d)
	}
	launchedBySteps := 0
	for _, st := range ev.Steps {
		if !st.Check {
			launchedBySteps += len(st.Sessions)
		}
	}
	if launchedBySteps != ev.Launched {
		t.Errorf("the steps ran %d runs, launched says %d", launchedBySteps, ev.Launched)
	}
	rc.accepted = acceptedStatus(resp.Status)
	dissentAnswered := 0
	for _, d := range ev.Disagreements {
		if d.Replica < 0 || d.Replica >= len(ev.Verdicts) {
			t.Errorf("disagreement of replica %d out of %d runs", d.Replica, len(ev.Verdicts))
			continue
		}
		if d.Label == router.LabelCancelled {
			t.Errorf("run %d, cancelled, is listed as a disagreement", d.Replica)
		}
		if d.Label != ev.Verdicts[d.Replica] {
			t.Errorf("disagreement %d labelled %s, verdicts say %s", d.Replica, d.Label, ev.Verdicts[d.Replica])
		}
		switch {
		case strings.HasPrefix(d.Reason, "no vote"):
			if d.Label != router.LabelOK {
				t.Errorf("run %d, no vote, labelled %s", d.Replica, d.Label)
			}
			rc.noVote++
		case d.Label != router.LabelTimeout && d.Label != router.LabelError:
			dissentAnswered++
		}
	}
	if len(ev.Disagreements) > rc.answered+rc.failed {
		t.Errorf("%d disagreements for %d runs not cancelled", len(ev.Disagreements), rc.answered+rc.failed)
	}
	if !rc.accepted || ev.Dissent != nil {
		return rc
	}
	if rc.failed+dissentAnswered+rc.noVote != len(ev.Disagreements) {
		t.Errorf("an accepted call lists %d disagreements, want its %d failed runs, %d dissents and %d no votes", len(ev.Disagreements), rc.failed, dissentAnswered, rc.noVote)
	}
	rc.agreeing, rc.against = rc.answered-dissentAnswered-rc.noVote, dissentAnswered
	if d := cmp.Diff(float64(rc.agreeing)/float64(rc.agreeing+rc.against), ev.Agreement, exact); d != "" {
		t.Errorf("agreement is not the agreeing answers over the votes, %d of %d (-want +got):\n%s", rc.agreeing, rc.agreeing+rc.against, d)
	}
	post := consensus.Posterior(rc.agreeing, rc.against)
	switch {
	case !reputationOn:
		if ev.Calibration != nil {
			t.Errorf("calibration %+v without reputation", ev.Calibration)
		}
		if d := cmp.Diff(post, resp.Confidence, exact); d != "" {
			t.Errorf("confidence is not Posterior(%d, %d) (-want +got):\n%s", rc.agreeing, rc.against, d)
		}
	case ev.Leader != nil:
	case ev.Calibration == nil:
		if resp.Evidence.Steps[0].Route != "/api/v2/validate" && resp.Evidence.Steps[0].Route != "/api/v2/delegate" {
			t.Errorf("no calibration over a router that keeps reputation")
		}
	default:
		if d := cmp.Diff(ev.Calibration.Read(), resp.Confidence, exact); d != "" {
			t.Errorf("confidence is not its calibration basis read (-want +got):\n%s", d)
		}
		if ev.Calibration.Conservative > post+1e-12 && ev.Plurality == nil {
			t.Errorf("conservative %v above Posterior(%d, %d) = %v", ev.Calibration.Conservative, rc.agreeing, rc.against, post)
		}
		if ev.Plurality != nil && len(ev.Calibration.Points) == 0 {
			want := consensus.PluralityPosteriorAt(ev.Plurality.Groups, 0, ev.Plurality.Coincidence, ev.Plurality.Reliability)
			if ev.Calibration.Conservative > want+1e-12 {
				t.Errorf("conservative %v above PluralityPosteriorAt %v", ev.Calibration.Conservative, want)
			}
		}
	}
	return rc
}

// checkReceipt compares what the inline receipt of resp records with
// resp: the decision, its agreement, the policy snapshot's calibration
// and the consensus snapshot's verdicts, agreement and agreeing runs.
func checkReceipt(t *testing.T, resp *trust.Response, policy trust.Policy) {
	t.Helper()
	r := checkDecision(t, resp, policy)
	checkSnapshot(t, resp, r)
}

// checkDecision compares the decision and policy snapshot of the inline
// receipt of resp with resp, and returns the receipt.
func checkDecision(t *testing.T, resp *trust.Response, policy trust.Policy) *receipt.Receipt {
	t.Helper()
	if len(resp.Receipt) == 0 {
		t.Fatal("no receipt")
	}
	var r receipt.Receipt
	if err := json.Unmarshal(resp.Receipt, &r); err != nil {
		t.Fatal(err)
	}
	ev := resp.Evidence
	if r.Decision.Status != string(resp.Status) {
		t.Errorf("receipt status %s, response %s", r.Decision.Status, resp.Status)
	}
	if d := cmp.Diff(resp.Confidence, r.Decision.Confidence); d != "" {
		t.Errorf("receipt confidence (-response +receipt):\n%s", d)
	}
	if a := r.Decision.Agreement; a == nil {
		t.Error("receipt without decision.agreement")
	} else if d := cmp.Diff(receipt.Agreement{Share: ev.Agreement, Replicas: a.Replicas, Spent: ev.Redundancy}, *a); d != "" {
		t.Errorf("receipt decision.agreement (-response +receipt):\n%s", d)
	}
	if p := r.PolicySnapshot; p != nil {
		if p.Tier != string(policy) {
			t.Errorf("policy snapshot tier %s, want %s", p.Tier, policy)
		}
		if (p.Calibration == nil) != (ev.Calibration == nil) {
			t.Errorf("policy snapshot calibration %+v, response %+v", p.Calibration, ev.Calibration)
		} else if p.Calibration != nil {
			c := ev.Calibration
			want := receipt.CalibrationSnapshot{Tier: c.Tier, Basis: c.Basis, Outcomes: c.Outcomes, Uncalibrated: c.Uncalibrated,
				Conservative: c.Conservative, Points: []receipt.CalibrationPoint{}}
			for _, pt := range c.Points {
				want.Points = append(want.Points, receipt.CalibrationPoint{Score: pt.Score, Rate: pt.Rate, Outcomes: pt.Outcomes})
			}
			if d := cmp.Diff(want, *p.Calibration, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("policy snapshot calibration (-response +receipt):\n%s", d)
			}
		}
		if policy == trust.PolicyAdaptive && ev.Leader == nil && ev.Judging == nil && p.Consensus.Replicas != ev.Launched {
			t.Errorf("adaptive policy snapshot replicas %d, launched %d", p.Consensus.Replicas, ev.Launched)
		}
	}
	return &r
}

// checkSnapshot compares the consensus snapshot of r, the receipt of
// resp, with resp, and recomputes its figures from the snapshot alone.
func checkSnapshot(t *testing.T, resp *trust.Response, r *receipt.Receipt) {
	t.Helper()
	ev := resp.Evidence
	cs := r.ConsensusSnapshot
	if cs == nil {
		return
	}
	verdicts := make([]string, len(ev.Verdicts))
	for i, v := range ev.Verdicts {
		verdicts[i] = string(v)
	}
	if ev.Judging == nil && ev.Checked == 0 {
		if d := cmp.Diff(verdicts, cs.Verdicts); d != "" {
			t.Errorf("consensus snapshot verdicts (-response +receipt):\n%s", d)
		}
	}
	if ev.Judging != nil || ev.Dissent != nil || ev.Leader != nil {
		return
	}
	if d := cmp.Diff(ev.Agreement, cs.Agreement, exact); d != "" {
		t.Errorf("consensus snapshot agreement (-response +receipt):\n%s", d)
	}
	votes := 0
	for _, v := range cs.Verdicts {
		if v != string(router.LabelCancelled) && v != string(router.LabelTimeout) && v != string(router.LabelError) {
			votes++
		}
	}
	if cs.Numbers != nil {
		votes = 0
		for _, n := range cs.Numbers {
			if n != nil {
				votes++
			}
		}
	}
	if votes > 0 && cs.Agreement > 0 {
		if d := cmp.Diff(float64(len(cs.Agreeing))/float64(votes), cs.Agreement, exact); d != "" {
			t.Errorf("consensus snapshot agreement is not its agreeing runs over its votes (-want +got):\n%s", d)
		}
	}
	if cs.Strategy == string(router.AggregationMajority) && cs.Agreement > 0 && cs.Tolerance == nil && r.PolicySnapshot != nil && r.PolicySnapshot.Calibration == nil {
		a := len(cs.Agreeing)
		if d := cmp.Diff(consensus.Posterior(a, votes-a), cs.Confidence, exact); d != "" {
			t.Errorf("majority snapshot confidence is not Posterior(%d, %d) (-want +got):\n%s", a, votes-a, d)
		}
	}
	if cs.Strategy == string(router.AggregationWeighted) && cs.Agreement > 0 && r.Mode != string(trust.ModeDelegation) && r.PolicySnapshot != nil {
		checkWeightedSnapshot(t, cs, r.PolicySnapshot.Calibration)
	}
}

// checkWeightedSnapshot recomputes the weighted confidence of a
// validation's consensus snapshot from its verdicts, weights and
// tempering (docs/INTERFACE.md, 6.5): the calibration's uncalibrated
// input, and its conservative number the smaller of it and the
// Posterior of the agreeing runs.
func checkWeightedSnapshot(t *testing.T, cs *receipt.ConsensusSnapshot, cal *receipt.CalibrationSnapshot) {
	t.Helper()
	if len(cs.Weights) != len(cs.Verdicts) || len(cs.Agreeing) == 0 {
		t.Errorf("weighted snapshot with %d weights for %d verdicts, agreeing %v", len(cs.Weights), len(cs.Verdicts), cs.Agreeing)
		return
	}
	win := cs.Verdicts[cs.Agreeing[0]]
	sums := map[string]float64{}
	var order []string
	for i, v := range cs.Verdicts {
		if cs.Weights[i] == 0 && (v == "CANCELLED" || v == "TIMEOUT" || v == "ERROR") {
			continue
		}
		if _, ok := sums[v]; !ok {
			order = append(order, v)
		}
		sums[v] += cs.Weights[i]
	}
	scores := make([]float64, len(order))
	w := -1
	for i, v := range order {
		scores[i] = sums[v]
		if v == win {
			w = i
		}
	}
	cred := consensus.Credence(scores, w, cs.Tempering)
	if cal == nil {
		t.Errorf("weighted snapshot without calibration; credence %v", cred)
		return
	}
	a := len(cs.Agreeing)
	votes := 0
	for _, v := range cs.Verdicts {
		if v != "CANCELLED" && v != "TIMEOUT" && v != "ERROR" {
			votes++
		}
	}
	want := []float64{cred, min(cred, consensus.Posterior(a, votes-a))}
	if d := cmp.Diff(want, []float64{cal.Uncalibrated, cal.Conservative}, exact); d != "" {
		t.Errorf("weighted snapshot: uncalibrated and conservative against its weights (-want +got):\n%s", d)
	}
}

// checkFailure fails the test unless err is what a call whose runs all
// failed answers: a *trust.Error of status 502 (every run failed) or 504
// (none answered in time) with a code.
func checkFailure(t *testing.T, err error) {
	t.Helper()
	var terr *trust.Error
	if !errors.As(err, &terr) || terr.Status != http.StatusBadGateway && terr.Status != http.StatusGatewayTimeout || terr.Code == "" {
		t.Errorf("call: %v (%T), want a 502 or 504 *trust.Error with a code", err, err)
	}
}
