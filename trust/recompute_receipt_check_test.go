package trust_test

// The receipt checks of the recomputation rig (10.3): the receipt verifies
// and hashes the call's input and result, its decision and policy snapshot
// state the response's figures, and its consensus snapshot recomputes: by
// 6.4, 6.5 or 6.6 from its own verdicts, weights and numbers, except that
// adaptive's pooled tally over a router that keeps reputation states the
// decision's confidence, read on policy_snapshot.calibration (and for an
// open answer from policy_snapshot.plurality).

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// basisOf is a receipt's calibration snapshot as the reputation.Basis it
// records.
func basisOf(cs *receipt.CalibrationSnapshot) *reputation.Basis {
	b := &reputation.Basis{Tier: cs.Tier, Basis: cs.Basis, Outcomes: cs.Outcomes, Uncalibrated: cs.Uncalibrated, Conservative: cs.Conservative}
	for _, p := range cs.Points {
		b.Points = append(b.Points, reputation.Point{Score: p.Score, Rate: p.Rate, Outcomes: p.Outcomes})
	}
	return b
}

// snapshotCounts counts a consensus snapshot's verdicts: the answers, and
// the failed runs (cancelled runs are neither).
func snapshotCounts(cs *receipt.ConsensusSnapshot) (answers, failed int) {
	for _, v := range cs.Verdicts {
		switch l := router.Label(v); {
		case failedLabel(l):
			failed++
		case l != router.LabelCancelled:
			answers++
		}
	}
	return answers, failed
}

// checkReceipt checks resp's inline receipt; sess are the sessions of its
// runs.
func (r *recomputeRig) checkReceipt(c recomputeCall, resp *trust.Response, sess []router.SessionID) mismatches {
	var bad mismatches
	if len(resp.Receipt) == 0 {
		bad.add("receipt", "absent")
		return bad
	}
	res, err := r.verifier.Verify(resp.Receipt, receipt.Originals{Input: c.input, Output: resp.Result}, time.Now())
	if err != nil || !res.Valid() {
		bad.add("receipt", "does not verify: %v %+v", err, res)
	}
	rc, err := receipt.Parse(resp.Receipt)
	if err != nil {
		bad.add("receipt", "parse: %v", err)
		return bad
	}
	ev := resp.Evidence
	d := rc.Decision
	if d.Status != string(resp.Status) || d.Confidence != resp.Confidence {
		bad.add("receipt.decision", "status %s confidence %v; response %s %v", d.Status, d.Confidence, resp.Status, resp.Confidence)
	}
	if d.Agreement == nil || d.Agreement.Share != ev.Agreement || d.Agreement.Spent != ev.Redundancy {
		bad.add("receipt.decision.agreement", "%+v; response agreement %v, redundancy %d", d.Agreement, ev.Agreement, ev.Redundancy)
	}
	replicas := 0
	if d.Agreement != nil {
		replicas = d.Agreement.Replicas
	}
	if want := fmt.Sprintf("agreement %.2f over %d replicas (%d spent in all)", ev.Agreement, replicas, ev.Redundancy); len(d.Reasons) == 0 || d.Reasons[0] != want {
		bad.add("receipt.decision.reasons", "%q, want first %q", d.Reasons, want)
	}
	if ri := resp.RetryInstructions; ri != nil && !slices.Contains(d.Reasons, ri.Reason) {
		bad.add("receipt.decision.reasons", "%q lack the retry reason %q", d.Reasons, ri.Reason)
	}
	if (d.Payment == nil) != (ev.Payment == nil) || (d.Payment != nil && *d.Payment != *ev.Payment) {
		bad.add("receipt.decision.payment", "%+v, evidence %+v", d.Payment, ev.Payment)
	}
	if want := canonicalSHA256(c.input); rc.TaskMeta.InputHash != want {
		bad.add("receipt.task_meta.input_hash", "%s, want %s", rc.TaskMeta.InputHash, want)
	}
	if want := canonicalSHA256(resp.Result); rc.TaskMeta.OutputHash != want {
		bad.add("receipt.task_meta.output_hash", "%s, want %s of %s", rc.TaskMeta.OutputHash, want, resp.Result)
	}
	pooled := c.policy == "adaptive" && !c.judged // 9.4: a judged call's snapshots are its last validation's
	ps := rc.PolicySnapshot
	if ps == nil || ps.Tier != c.policy {
		bad.add("receipt.policy_snapshot", "%+v, tier %s", ps, c.policy)
		return bad
	}
	if ps.Consensus.Replicas != replicas {
		bad.add("receipt.policy_snapshot.consensus.replicas", "%d, decision.agreement.replicas %d", ps.Consensus.Replicas, replicas)
	}
	if want, ok := map[string]int{"fast": 1, "safe": 3, "oracle": 5}[c.policy]; ok && !c.judged && ps.Consensus.Replicas != want {
		bad.add("receipt.policy_snapshot.consensus.replicas", "%d, want %d for %s", ps.Consensus.Replicas, want, c.policy)
	}
	// Adaptive's pooled tally: the runs launched, any count from 1 to 5.
	if n := ps.Consensus.Replicas; pooled && (n != ev.Launched || n < 1 || n > 5) {
		bad.add("receipt.policy_snapshot.consensus.replicas", "%d, adaptive launched %d (1 to 5)", n, ev.Launched)
	}
	b, pc := ev.Calibration, ps.Calibration
	if (b == nil) != (pc == nil) || (b != nil && (pc.Tier != b.Tier || pc.Basis != b.Basis || pc.Uncalibrated != b.Uncalibrated || pc.Conservative != b.Conservative || len(pc.Points) != len(b.Points))) {
		bad.add("receipt.policy_snapshot.calibration", "%+v, evidence %+v", pc, b)
	}
	if p, q := ev.Plurality, ps.Plurality; (p == nil) != (q == nil) || (p != nil && (!slices.Equal(p.Groups, q.Groups) || p.Coincidence != q.Coincidence || p.Reliability != q.Reliability)) {
		bad.add("receipt.policy_snapshot.plurality", "%+v, evidence %+v", q, p)
	}
	if l, q := ev.Lone, ps.Lone; (l == nil) != (q == nil) || (l != nil && (l.Threshold != q.Threshold || l.Confidence != q.Confidence)) {
		bad.add("receipt.policy_snapshot.lone", "%+v, evidence %+v", q, l)
	}
	if refs := rc.CortensorRefs; refs == nil {
		bad.add("receipt.cortensor_refs", "absent")
	} else {
		ids := make([]int64, len(sess))
		for i, s := range sess {
			ids[i] = int64(s)
		}
		if !slices.Equal(refs.Sessions, ids) {
			bad.add("receipt.cortensor_refs.sessions", "%v, steps %v", refs.Sessions, ids)
		}
	}
	cs := rc.ConsensusSnapshot
	if cs == nil {
		bad.add("receipt.consensus_snapshot", "absent")
		return bad
	}
	if pooled {
		vs := make([]string, len(ev.Verdicts))
		for i, v := range ev.Verdicts {
			vs[i] = string(v)
		}
		if cs.Replicas != ev.Launched || !slices.Equal(cs.Verdicts, vs) || cs.Agreement != ev.Agreement {
			bad.add("receipt.consensus_snapshot", "replicas %d, verdicts %v, agreement %v; evidence %d, %v, %v", cs.Replicas, cs.Verdicts, cs.Agreement, ev.Launched, vs, ev.Agreement)
		}
	}
	answers, failed := snapshotCounts(cs)
	against := func(agreeing int) int {
		if cs.Failures == "negative_evidence" {
			return answers - agreeing + failed
		}
		return answers - agreeing
	}
	if pooled && r.repOn {
		return append(bad, checkStatedSnapshot(cs, ps, d.Confidence)...)
	}
	if j := ev.Judging; c.judged && c.policy == "adaptive" && r.repOn && j != nil && len(j.Candidates) > 0 {
		// 9.4: the snapshot is the last validation's pooled tally, which
		// states that validation's confidence: the last candidate's
		// that was judged, since a candidate whose producer failed
		// has no validation (no verdict).
		last := j.Candidates[len(j.Candidates)-1]
		for i := len(j.Candidates) - 1; i >= 0 && last.Verdict == ""; i-- {
			last = j.Candidates[i]
		}
		if cs.Confidence != last.Confidence {
			bad.add("receipt.consensus_snapshot.confidence", "judged adaptive: %v, the last judged candidate's %v", cs.Confidence, last.Confidence)
		}
		return bad
	}
	switch {
	case cs.Strategy == "weighted" && len(cs.Weights) == len(cs.Verdicts) && len(cs.Agreeing) > 0:
		// 6.5: exp(t·S_win) / (Σ_g exp(t·S_g) + [1 if one group]), at most
		// Posterior(agreeing, against): the conservative number.
		sums := map[string]float64{}
		for i, v := range cs.Verdicts {
			l := router.Label(v)
			if l == router.LabelCancelled || (failedLabel(l) && cs.Failures != "negative_evidence") {
				continue
			}
			k := v
			switch {
			case failedLabel(l):
				k = "failed"
			case slices.Contains(cs.Agreeing, i):
				k = "win"
			case c.mode == "delegation" && !c.judged:
				// A delegation's groups are its texts; a judged
				// one's snapshot is its last validation's, whose
				// groups are the judges' labels (9.4).
				k = "other-" + r.beh[sess[i]].text
			}
			sums[k] += cs.Weights[i]
		}
		den := 0.0
		for _, sg := range sums {
			den += math.Exp(cs.Tempering * sg)
		}
		if len(sums) == 1 {
			den++
		}
		want := math.Min(math.Exp(cs.Tempering*sums["win"])/den, posteriorExact(len(cs.Agreeing), against(len(cs.Agreeing))))
		if !approxEqual(cs.Confidence, want) {
			bad.add("receipt.consensus_snapshot.confidence", "weighted: %v; 6.5 from weights %v, tempering %v, agreeing %v: %v", cs.Confidence, cs.Weights, cs.Tempering, cs.Agreeing, want)
		}
	case cs.Strategy == "median" && cs.Tolerance != nil:
		// 6.6: Posterior(agreeing, against), against the other numbers (and
		// the failed runs under negative_evidence); a run without a number
		// is neither.
		if n, ok := checkMedian(&bad, cs); ok {
			a, dd := len(cs.Agreeing), n-len(cs.Agreeing)
			if cs.Failures == "negative_evidence" {
				dd += failed
			}
			want := posteriorExact(a, dd)
			if a == 0 {
				want = 0 // the failed runs won: no winner (6.4)
			}
			if !approxEqual(cs.Confidence, want) {
				bad.add("receipt.consensus_snapshot.confidence", "median: %v; 6.6: Posterior(%d, %d) = %v (numbers %v)", cs.Confidence, a, dd, want, cs.Numbers)
			}
		}
	case cs.Strategy == "majority" && cs.Tolerance == nil && len(cs.Agreeing) > 0:
		// 6.4: a the agreeing runs, d the other answers (and the failed
		// runs under negative_evidence).
		a, dd := len(cs.Agreeing), against(len(cs.Agreeing))
		if !approxEqual(cs.Agreement, float64(a)/float64(a+dd)) {
			bad.add("receipt.consensus_snapshot.agreement", "%v; 6.4: a/(a+d) = %d/%d (verdicts %v)", cs.Agreement, a, a+dd, cs.Verdicts)
		}
		if want := posteriorExact(a, dd); !approxEqual(cs.Confidence, want) {
			bad.add("receipt.consensus_snapshot.confidence", "%v; 6.4: Posterior(%d,%d) = %v (verdicts %v, policy %s)", cs.Confidence, a, dd, want, cs.Verdicts, c.policy)
		}
	}
	return bad
}

// checkMedian checks a median snapshot's aggregate (the lower median of its
// numbers) and agreeing (the numbers within tolerance of it, or none when
// failed runs counted as negative evidence win), 6.6, and returns how many
// numbers it holds.
func checkMedian(bad *mismatches, cs *receipt.ConsensusSnapshot) (int, bool) {
	var nums []float64
	for _, x := range cs.Numbers {
		if x != nil {
			nums = append(nums, *x)
		}
	}
	if len(nums) == 0 {
		return 0, false
	}
	sorted := slices.Sorted(slices.Values(nums))
	m := sorted[(len(sorted)+1)/2-1]
	if cs.Aggregate == nil || *cs.Aggregate != m {
		bad.add("receipt.consensus_snapshot.aggregate", "%v, lower median of %v is %v", cs.Aggregate, nums, m)
	}
	var agree []int
	agreeW := 0.0
	for i, x := range cs.Numbers {
		if x != nil && math.Abs(*x-m) <= math.Max(cs.Tolerance.Absolute, cs.Tolerance.Relative*math.Abs(m)) {
			agree = append(agree, i)
			if i < len(cs.Weights) {
				agreeW += cs.Weights[i]
			}
		}
	}
	// Failed runs counted as negative evidence win, and no number does,
	// when they are at least as many as the agreeing numbers, or under
	// weights weigh at least as much (6.4, 6.6).
	if cs.Failures == "negative_evidence" {
		failed, failedW := 0, 0.0
		for i, v := range cs.Verdicts {
			if failedLabel(router.Label(v)) {
				failed++
				if i < len(cs.Weights) {
					failedW += cs.Weights[i]
				}
			}
		}
		weighted := len(cs.Weights) == len(cs.Verdicts) && cs.WeightBy != ""
		if failed > 0 && (!weighted && failed >= len(agree) || weighted && failedW >= agreeW) {
			agree = nil
		}
	}
	if !slices.Equal(agree, cs.Agreeing) {
		bad.add("receipt.consensus_snapshot.agreeing", "%v, numbers within tolerance of %v: %v", cs.Agreeing, m, agree)
	}
	return len(nums), true
}

// checkStatedSnapshot checks adaptive's pooled snapshot over a router that
// keeps reputation (10.3, 6.6): its confidence is the decision's, which is
// policy_snapshot.calibration read as 9.2 says, with no point for an open
// answer counted by runs PluralityPosteriorAt of policy_snapshot.plurality;
// a median snapshot's numbers give the basis's number before calibration.
func checkStatedSnapshot(cs *receipt.ConsensusSnapshot, ps *receipt.PolicySnapshot, decided float64) mismatches {
	var bad mismatches
	if cs.Confidence != decided {
		bad.add("receipt.consensus_snapshot.confidence", "adaptive pooled, reputation on: %v, decision.confidence %v", cs.Confidence, decided)
	}
	pc := ps.Calibration
	if pc == nil {
		return bad // the dissent rule states its own record (9.2)
	}
	if read := readCalibration(basisOf(pc)); !approxEqual(cs.Confidence, read) {
		bad.add("receipt.consensus_snapshot.confidence", "adaptive pooled: %v; policy_snapshot.calibration %+v reads %v", cs.Confidence, *pc, read)
	}
	if p := ps.Plurality; p != nil && len(pc.Points) == 0 && cs.Strategy == "majority" {
		if pp := consensus.PluralityPosteriorAt(p.Groups, 0, p.Coincidence, p.Reliability); !approxEqual(cs.Confidence, pp) {
			bad.add("receipt.consensus_snapshot.confidence", "adaptive pooled, no outcome: %v; PluralityPosteriorAt(%v, 0, %v, %v) = %v", cs.Confidence, p.Groups, p.Coincidence, p.Reliability, pp)
		}
	}
	if cs.Strategy == "median" && cs.Tolerance != nil {
		if n, ok := checkMedian(&bad, cs); ok {
			a := len(cs.Agreeing)
			if want := posteriorExact(a, n-a); !approxEqual(pc.Uncalibrated, want) {
				bad.add("receipt.policy_snapshot.calibration.uncalibrated", "%v; the snapshot's numbers give Posterior(%d, %d) = %v", pc.Uncalibrated, a, n-a, want)
			}
		}
	}
	return bad
}
