package trust_test

// The checks of TestRecompute_client: each figure of a response recomputed
// from the response alone, with the exported functions 9.2, 9.3, 6.5, 6.6
// and 10.3 name.

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// fromResponse recomputes resp's figures from the response alone, as 9.2
// and 9.3 say, with the exported functions they name; of the rig it reads
// only what the host configured (reputation, an escalation threshold).
func fromResponse(c recomputeCall, rig *recomputeRig, resp *trust.Response) mismatches {
	repOn := rig.repOn
	var bad mismatches
	ev := resp.Evidence
	if ev.Answered+ev.Failed+ev.Cancelled != ev.Launched || len(ev.Verdicts) != ev.Launched {
		bad.add("evidence counts", "answered %d + failed %d + cancelled %d, launched %d, %d verdicts", ev.Answered, ev.Failed, ev.Cancelled, ev.Launched, len(ev.Verdicts))
		return bad
	}
	v := ev.Answered - noVotes(ev)
	if v <= 0 {
		return bad
	}
	x := ev.Agreement * float64(v)
	a := int(math.Round(x))
	if math.Abs(x-float64(a)) > 1e-9 {
		bad.add("evidence.agreement", "%v × %d votes = %v, no whole count", ev.Agreement, v, x)
		return bad
	}
	ruled := ev.Leader != nil || ev.Dissent != nil
	// A settled answer is no dissent: the runs cut short are no votes,
	// and an accepted winner's agreement counts the answers against it,
	// which the disagreements list.
	against := 0
	for _, d := range ev.Disagreements {
		if d.Label != router.LabelCancelled && !failedLabel(d.Label) && !strings.HasPrefix(d.Reason, "no vote:") {
			against++
		}
		if d.Label == router.LabelCancelled {
			bad.add("evidence.disagreements", "a cancelled run %d is listed as a disagreement", d.Replica)
		}
	}
	if accepted(c.mode, resp.Status) && !ruled && a != v-against {
		bad.add("evidence.agreement", "%v: %d of %d votes, but %d answers disagree (%d cancelled)", ev.Agreement, a, v, against, ev.Cancelled)
	}
	if lead := ruler(ev); lead != nil {
		bad = append(bad, checkRuled(c, resp, lead, v)...)
	}
	post := consensus.Posterior(a, v-a)
	b := ev.Calibration
	switch {
	case ev.Dissent != nil:
		d := ev.Dissent
		if want := float64(d.Won+1) / float64(d.Won+d.Lost+2); !approxEqual(resp.Confidence, want) || b != nil {
			bad.add("confidence", "dissent: %v, calibration %v; want %v uncalibrated", resp.Confidence, b, want)
		}
	case !repOn:
		if b != nil || ev.Plurality != nil {
			bad.add("evidence.calibration", "reputation off, yet %v, %v", b, ev.Plurality)
		}
		if !approxEqual(resp.Confidence, post) {
			bad.add("confidence", "reputation off: %v, Posterior(%d, %d) = %v", resp.Confidence, a, v-a, post)
		}
	case b == nil:
		bad.add("evidence.calibration", "absent with reputation on")
	default:
		bad = append(bad, checkBasis(c, resp, a, v)...)
	}
	bad = append(bad, checkStatusAlone(c, resp, a, v, rig.escalation)...)
	return append(bad, checkReceiptAlone(c, repOn, resp)...)
}

// checkBasis checks a confidence read on its calibration basis (6.5, 9.2,
// 9.3): Basis.Read and reputation.Interpolate give the confidence, and the
// basis's numbers are the documented functions of the counts.
func checkBasis(c recomputeCall, resp *trust.Response, a, v int) mismatches {
	var bad mismatches
	ev, b := resp.Evidence, resp.Evidence.Calibration
	var read float64
	switch {
	case len(b.Points) == 0:
		read = b.Conservative
		if b.Basis != reputation.BasisUncalibrated {
			bad.add("evidence.calibration.basis", "%q with no point", b.Basis)
		}
	case b.Basis == reputation.BasisHeld:
		read = min(max(b.Conservative, 0), b.Points[0].Rate, 1)
		if b.Uncalibrated > b.Points[0].Score {
			bad.add("evidence.calibration.basis", "held, yet uncalibrated %v above the lowest point %v", b.Uncalibrated, b.Points[0].Score)
		}
	default:
		read = reputation.Interpolate(b.Points, b.Uncalibrated)
	}
	n := 0.0
	for _, p := range b.Points {
		n += p.Outcomes
	}
	// The points are the one or two the confidence was read between, of
	// a map holding Outcomes in all.
	if len(b.Points) > 2 || n > b.Outcomes+1e-9 || (len(b.Points) == 0 && b.Outcomes != 0) {
		bad.add("evidence.calibration.outcomes", "%v on basis %s; its points hold %v", b.Outcomes, b.Basis, n)
	}
	if !approxEqual(resp.Confidence, read) || !approxEqual(read, b.Read()) {
		bad.add("confidence", "%v; the basis reads %v (Basis.Read %v)", resp.Confidence, read, b.Read())
	}
	if ev.Leader != nil {
		return bad
	}
	post := consensus.Posterior(a, v-a)
	switch {
	case c.mode != "delegation":
		// 6.5: conservative = min(weighted, Posterior), the weighted
		// being uncalibrated.
		if want := min(b.Uncalibrated, post); !approxEqual(b.Conservative, want) {
			bad.add("evidence.calibration.conservative", "%v; min(uncalibrated %v, Posterior(%d, %d) %v) = %v", b.Conservative, b.Uncalibrated, a, v-a, post, want)
		}
		if accepted(c.mode, resp.Status) && b.Tier != c.policy+"/"+string(resp.Status) {
			bad.add("evidence.calibration.tier", "%q for %s %s", b.Tier, c.policy, resp.Status)
		}
	case c.numeric:
		// 6.6: the median's Posterior, counted unweighted, on the tier's
		// numeric map.
		if !approxEqual(b.Conservative, post) || !approxEqual(b.Uncalibrated, post) {
			bad.add("evidence.calibration", "numeric: conservative %v, uncalibrated %v; Posterior(%d, %d) = %v", b.Conservative, b.Uncalibrated, a, v-a, post)
		}
		if want := c.policy + trust.NumericCalibrationSuffix; b.Tier != want {
			bad.add("evidence.calibration.tier", "%q, want %q", b.Tier, want)
		}
	default:
		p := ev.Plurality
		if p == nil {
			bad.add("evidence.plurality", "absent for an open answer over reputation")
			break
		}
		sum := 0
		for _, g := range p.Groups {
			sum += g
		}
		if sum != v || len(p.Groups) == 0 || p.Groups[0] != a {
			bad.add("evidence.plurality.groups", "%v: %d votes, the winner's %d", p.Groups, v, a)
		}
		pp := consensus.PluralityPosteriorAt(p.Groups, 0, p.Coincidence, p.Reliability)
		if b.Uncalibrated > post+1e-9 {
			bad.add("evidence.calibration.uncalibrated", "%v above Posterior(%d, %d) = %v", b.Uncalibrated, a, v-a, post)
		}
		if b.Conservative > pp+1e-9 {
			bad.add("evidence.calibration.conservative", "%v above PluralityPosteriorAt(%v) = %v", b.Conservative, p.Groups, pp)
		}
		if c.policy != "adaptive" || b.Tier != "adaptive" {
			break
		}
		// 9.2: adaptive's count states Posterior(a, v − a) mapped, with
		// the plurality's posterior as its conservative number; where the
		// weighted tally stands (its pooled snapshot is "weighted"), the
		// smaller of that and the weighted confidence, which a tally of
		// one group recomputes from the snapshot's weights.
		cs := snapshotOf(resp)
		switch {
		case cs == nil:
			bad.add("receipt.consensus_snapshot", "absent")
		case cs.Strategy == "majority":
			if !approxEqual(b.Uncalibrated, post) || !approxEqual(b.Conservative, pp) {
				bad.add("evidence.calibration", "adaptive plurality: uncalibrated %v, conservative %v; Posterior(%d, %d) = %v, PluralityPosteriorAt = %v", b.Uncalibrated, b.Conservative, a, v-a, post, pp)
			}
		case cs.Strategy == "weighted" && len(p.Groups) == 1 && len(cs.Weights) == len(cs.Verdicts):
			s := 0.0
			for _, i := range cs.Agreeing {
				s += cs.Weights[i]
			}
			w := consensus.Credence([]float64{s}, 0, cs.Tempering)
			if !approxEqual(b.Conservative, min(w, pp)) || !approxEqual(b.Uncalibrated, min(w, post)) {
				bad.add("evidence.calibration", "adaptive weighted: uncalibrated %v, conservative %v; weighted %v, Posterior %v, PluralityPosteriorAt %v", b.Uncalibrated, b.Conservative, w, post, pp)
			}
		}
	}
	return bad
}

// checkStatusAlone checks the status against the tier's rule from the
// counts (9.2, 9.3).
func checkStatusAlone(c recomputeCall, resp *trust.Response, a, v int, threshold float64) mismatches {
	var bad mismatches
	ev := resp.Evidence
	if (resp.Status == trust.StatusRetry || resp.Status == trust.StatusNeedsSpec) != (resp.RetryInstructions != nil) {
		bad.add("retry_instructions", "status %s, retry_instructions %v", resp.Status, resp.RetryInstructions)
	}
	if ev.Leader != nil || ev.Dissent != nil {
		return bad
	}
	lone, lbad := checkLone(c, resp, a, v, threshold)
	bad = append(bad, lbad...)
	ok := accepted(c.mode, resp.Status)
	strict := a >= 2 && 2*a > v
	switch {
	case c.mode == "delegation" && c.policy == "adaptive":
		if want := a >= 2 && resp.Confidence > trust.DefaultPluralityFloor; ok != want && !lone {
			bad.add("status", "9.2: a = %d of v = %d, confidence %v: VALID %v, status %s", a, v, resp.Confidence, want, resp.Status)
		}
		// 9.2: a RETRY of at least two names both figures and the floor.
		if ri := resp.RetryInstructions; ri != nil && a >= 2 && !strings.HasPrefix(ri.Reason, "no run answered") {
			var ga, gv int
			var gc, floor float64
			if _, err := fmt.Sscanf(ri.Reason, "the runs did not settle: the answer %d of %d runs gave states confidence %g, not above %g", &ga, &gv, &gc, &floor); err != nil ||
				ga != a || gv != v || math.Abs(gc-resp.Confidence) > 0.001 || floor != trust.DefaultPluralityFloor {
				bad.add("retry_instructions.reason", "%q; a = %d of v = %d, confidence %v (%v)", ri.Reason, a, v, resp.Confidence, err)
			}
		}
	case c.policy == "oracle":
		if want := v >= 3 && a == v; ok != want {
			bad.add("status", "oracle: %d of %d, status %s", a, v, resp.Status)
		}
	case c.policy == "safe" || c.policy == "adaptive":
		if strict && !ok && resp.Status != trust.StatusRetry {
			bad.add("status", "%s: strict majority %d of %d, status %s", c.policy, a, v, resp.Status)
		}
	}
	return bad
}

// checkLone checks 9.2's lone stop from the response alone. When the
// host set an escalation threshold (threshold > 0), an adaptive call that no leader
// decided and that ended on one answer (a = v = 1) records in
// evidence.lone the threshold and the confidence its run reported, and
// has the status of that answer's verdict exactly when the confidence is
// at least the threshold, else no verdict; any other call records none.
// It reports whether the lone stop decided the status.
func checkLone(c recomputeCall, resp *trust.Response, a, v int, threshold float64) (bool, mismatches) {
	var bad mismatches
	ev, l := resp.Evidence, resp.Evidence.Lone
	applies := threshold > 0 && c.policy == "adaptive" && ev.Leader == nil && ev.Dissent == nil && a == 1 && v == 1
	switch {
	case !applies && l != nil:
		bad.add("evidence.lone", "%+v on a %s call of %d of %d votes that no escalation threshold decided", *l, c.policy, a, v)
	case applies && l == nil:
		bad.add("evidence.lone", "absent on an adaptive call that ended on one answer under an escalation threshold")
	case applies:
		if l.Threshold != threshold {
			bad.add("evidence.lone.threshold", "%v; the host set %v", l.Threshold, threshold)
		}
		var label router.Label
		for _, vl := range ev.Verdicts {
			if !failedLabel(vl) && vl != router.LabelCancelled {
				label = vl
			}
		}
		if want := loneStatus(c.mode, label, l.Confidence >= l.Threshold); resp.Status != want {
			bad.add("status", "9.2: one answer %s reporting confidence %v at escalation threshold %v: %s, want %s", label, l.Confidence, l.Threshold, resp.Status, want)
		}
	}
	return applies, bad
}

// loneStatus is the status of a call of mode that ended on one answer
// labelled l: that answer's verdict when the escalation threshold settled
// it, else none.
func loneStatus(mode string, l router.Label, settled bool) trust.Status {
	switch {
	case mode == "delegation" && settled:
		return trust.StatusValid
	case mode == "delegation":
		return trust.StatusRetry
	case mode == "arbitration" && settled && l == router.Label(router.VerdictValid):
		return trust.StatusSellerValid
	case mode == "arbitration" && settled && l == router.Label(router.VerdictInvalid):
		return trust.StatusSellerInvalid
	case mode == "arbitration":
		return trust.StatusInconclusive
	case settled && (l == router.Label(router.VerdictValid) || l == router.Label(router.VerdictInvalid) || l == router.Label(router.VerdictNeedsSpec)):
		return trust.Status(l)
	}
	return trust.StatusRetry
}

// checkReceiptAlone checks the receipt against the response: the same
// decision and basis, and a majority or weighted validation snapshot that
// recomputes from its own verdicts, agreeing and weights (6.4, 6.5, 10.3).
func checkReceiptAlone(c recomputeCall, repOn bool, resp *trust.Response) mismatches {
	var bad mismatches
	rc, err := receipt.Parse(resp.Receipt)
	if err != nil {
		bad.add("receipt", "parse: %v", err)
		return bad
	}
	ev := resp.Evidence
	if rc.Decision.Status != string(resp.Status) || rc.Decision.Confidence != resp.Confidence {
		bad.add("receipt.decision", "%s %v; response %s %v", rc.Decision.Status, rc.Decision.Confidence, resp.Status, resp.Confidence)
	}
	ps, cs := rc.PolicySnapshot, rc.ConsensusSnapshot
	if ps == nil || cs == nil {
		bad.add("receipt", "policy snapshot %v, consensus snapshot %v", ps, cs)
		return bad
	}
	var pc *reputation.Basis
	if ps.Calibration != nil {
		pc = basisOf(ps.Calibration)
	}
	if diff := cmp.Diff(ev.Calibration, pc, cmpopts.EquateEmpty()); diff != "" {
		bad.add("receipt.policy_snapshot.calibration", "differs from evidence.calibration (-evidence +receipt):\n%s", diff)
	}
	var pp *trust.Plurality
	if q := ps.Plurality; q != nil {
		pp = &trust.Plurality{Groups: q.Groups, Coincidence: q.Coincidence, Reliability: q.Reliability}
	}
	if diff := cmp.Diff(ev.Plurality, pp); diff != "" {
		bad.add("receipt.policy_snapshot.plurality", "differs from evidence.plurality (-evidence +receipt):\n%s", diff)
	}
	var pl *trust.Lone
	if q := ps.Lone; q != nil {
		pl = &trust.Lone{Threshold: q.Threshold, Confidence: q.Confidence}
	}
	if diff := cmp.Diff(ev.Lone, pl); diff != "" {
		bad.add("receipt.policy_snapshot.lone", "differs from evidence.lone (-evidence +receipt):\n%s", diff)
	}
	if cs.Strategy == "median" && cs.Tolerance != nil {
		// 6.6: the aggregate is the lower median of the numbers, the
		// result, and the agreeing numbers lie within the tolerance.
		checkMedian(&bad, cs)
		var res float64
		if cs.Aggregate != nil && (json.Unmarshal(resp.Result, &res) != nil || res != *cs.Aggregate) {
			bad.add("result", "%s; the snapshot's aggregate %v", resp.Result, *cs.Aggregate)
		}
	}
	answers := 0
	for _, l := range cs.Verdicts {
		if ll := router.Label(l); !failedLabel(ll) && ll != router.LabelCancelled {
			answers++
		}
	}
	stated := c.policy == "adaptive" && repOn
	switch {
	case stated:
		if cs.Confidence != rc.Decision.Confidence {
			bad.add("receipt.consensus_snapshot.confidence", "adaptive over reputation: %v, decision %v", cs.Confidence, rc.Decision.Confidence)
		}
	case cs.Strategy == "majority" && len(cs.Agreeing) > 0 && cs.Tolerance == nil:
		a := len(cs.Agreeing)
		if !approxEqual(cs.Agreement, float64(a)/float64(answers)) || !approxEqual(cs.Confidence, consensus.Posterior(a, answers-a)) {
			bad.add("receipt.consensus_snapshot", "majority: agreement %v, confidence %v; %d of %d answers give %v, %v", cs.Agreement, cs.Confidence, a, answers, float64(a)/float64(answers), consensus.Posterior(a, answers-a))
		}
	case cs.Strategy == "weighted" && c.mode != "delegation" && len(cs.Agreeing) > 0 && len(cs.Weights) == len(cs.Verdicts):
		// A validation's groups are its labels: 6.5's credence of the
		// winner's summed weight, at most the count's Posterior.
		sums := map[string]float64{}
		win := cs.Verdicts[cs.Agreeing[0]]
		for i, l := range cs.Verdicts {
			if ll := router.Label(l); !failedLabel(ll) && ll != router.LabelCancelled {
				sums[l] += cs.Weights[i]
			}
		}
		scores := []float64{sums[win]}
		for l, s := range sums {
			if l != win {
				scores = append(scores, s)
			}
		}
		a := len(cs.Agreeing)
		if want := min(consensus.Credence(scores, 0, cs.Tempering), consensus.Posterior(a, answers-a)); !approxEqual(cs.Confidence, want) {
			bad.add("receipt.consensus_snapshot.confidence", "weighted: %v; Credence(%v, 0, %v) at most Posterior(%d, %d): %v", cs.Confidence, scores, cs.Tempering, a, answers-a, want)
		}
	}
	return bad
}

// snapshotOf is resp's receipt's consensus snapshot, or nil.
func snapshotOf(resp *trust.Response) *receipt.ConsensusSnapshot {
	rc, err := receipt.Parse(resp.Receipt)
	if err != nil {
		return nil
	}
	return rc.ConsensusSnapshot
}

// ruler is the record of the session that decided resp alone, a leader
// or a lone dissent, or nil.
func ruler(ev trust.Evidence) *reputation.Lead {
	if ev.Leader != nil {
		return ev.Leader
	}
	return ev.Dissent
}

// checkRuled checks a call one session decided (9.2): the status is that
// session's verdict; a leader ran alone (its checks aside) and states its
// one vote, read on the leader's map; a dissent states its one vote's
// share of the v votes.
func checkRuled(c recomputeCall, resp *trust.Response, lead *reputation.Lead, v int) mismatches {
	var bad mismatches
	ev := resp.Evidence
	var sess []router.SessionID
	for _, st := range ev.Steps {
		if !st.Check {
			sess = append(sess, st.Sessions...)
		}
	}
	i := slices.Index(sess, router.SessionID(lead.Session))
	if i < 0 || i >= len(ev.Verdicts) {
		bad.add("evidence.leader/dissent", "session %d ran no run of %v", lead.Session, sess)
		return bad
	}
	if want := trust.Status(ev.Verdicts[i]); c.mode == "validation" && resp.Status != want {
		bad.add("status", "%s; the deciding session %d answered %s", resp.Status, lead.Session, want)
	}
	if ev.Leader != nil {
		if ev.Launched != 1 || ev.Agreement != 1 {
			bad.add("evidence.leader", "launched %d, agreement %v; a leader runs alone", ev.Launched, ev.Agreement)
		}
		if b := ev.Calibration; b == nil || !strings.HasSuffix(b.Tier, trust.LeaderCalibrationSuffix) {
			bad.add("evidence.calibration.tier", "%v; a leader's map ends in %q", b, trust.LeaderCalibrationSuffix)
		}
		return bad
	}
	if !approxEqual(ev.Agreement, 1/float64(v)) {
		bad.add("evidence.agreement", "dissent: %v, its one vote of %d is %v", ev.Agreement, v, 1/float64(v))
	}
	return bad
}

// checkGrouped recomputes a grouped delegation's counts from
// evidence.grouping: one group a run, -1 for a run without an answer; the
// votes are the runs in a group, agreement the accepted winner's group's
// share, and evidence.plurality's groups their sizes, the winner's first.
func checkGrouped(resp *trust.Response) mismatches {
	var bad mismatches
	ev, g := resp.Evidence, resp.Evidence.Grouping
	if len(g.Groups) != len(ev.Verdicts) {
		bad.add("evidence.grouping.groups", "%d groups for %d runs", len(g.Groups), len(ev.Verdicts))
		return bad
	}
	sizes := map[int]int{}
	v := 0
	for i, k := range g.Groups {
		answered := ev.Verdicts[i] == router.LabelOK
		if answered != (k >= 0) {
			bad.add("evidence.grouping.groups", "run %d labelled %s in group %d", i, ev.Verdicts[i], k)
		}
		if k >= 0 {
			sizes[k]++
			v++
		}
	}
	if v != ev.Answered-noVotes(ev) || v == 0 {
		return bad
	}
	a := int(math.Round(ev.Agreement * float64(v)))
	if !slices.Contains(slices.Collect(func(yield func(int) bool) {
		for _, n := range sizes {
			if !yield(n) {
				return
			}
		}
	}), a) {
		bad.add("evidence.agreement", "%v × %d votes = %d, the size of no group %v", ev.Agreement, v, a, sizes)
	}
	if p := ev.Plurality; p != nil {
		got := slices.Clone(p.Groups)
		var want []int
		for _, n := range sizes {
			want = append(want, n)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) || p.Groups[0] != a {
			bad.add("evidence.plurality.groups", "%v; the grouping's sizes are %v, the winner's %d", p.Groups, sizes, a)
		}
	}
	return bad
}
