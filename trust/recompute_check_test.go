package trust_test

// The checks of one response of the recomputation rig: its counts, labels,
// payment, agreement, disagreements, confidence and status, each recomputed
// from the response body and the answers the rig's fake sessions are known
// to give. The receipt's checks are in recompute_receipt_check_test.go, a judged
// delegation's in recompute_judged_test.go.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// mismatch is one figure of a response that does not recompute: the field
// and what was stated against what was expected.
type mismatch struct{ field, detail string }

// mismatches collects mismatches.
type mismatches []mismatch

// add records a mismatch of field.
func (m *mismatches) add(field, format string, args ...any) {
	*m = append(*m, mismatch{field, fmt.Sprintf(format, args...)})
}

// failedLabel reports whether l is a run that failed (TIMEOUT or ERROR).
func failedLabel(l router.Label) bool { return l == router.LabelTimeout || l == router.LabelError }

// check recomputes every figure of resp, a response to c, and returns those
// that do not match.
func (r *recomputeRig) check(c recomputeCall, resp *trust.Response) mismatches {
	var bad mismatches
	ev := resp.Evidence

	// Counts: launched = redundancy = one label a run; answered, failed and
	// cancelled as the labels say; checked the check steps' runs.
	var answered, failed, cancelled int
	for _, l := range ev.Verdicts {
		switch {
		case failedLabel(l):
			failed++
		case l == router.LabelCancelled:
			cancelled++
		default:
			answered++
		}
	}
	if ev.Launched != len(ev.Verdicts) || ev.Redundancy != ev.Launched {
		bad.add("evidence.launched", "launched %d, redundancy %d, %d verdicts", ev.Launched, ev.Redundancy, len(ev.Verdicts))
	}
	if ev.Answered != answered || ev.Failed != failed || ev.Cancelled != cancelled {
		bad.add("evidence.answered/failed/cancelled", "states %d/%d/%d, verdicts give %d/%d/%d", ev.Answered, ev.Failed, ev.Cancelled, answered, failed, cancelled)
	}
	var sess []router.SessionID
	checked := 0
	for _, st := range ev.Steps {
		if st.Check {
			checked += len(st.Sessions)
			continue
		}
		sess = append(sess, st.Sessions...)
	}
	if len(sess) != ev.Launched {
		bad.add("evidence.steps", "steps name %d sessions for %d launched runs", len(sess), ev.Launched)
		return append(bad, r.checkReceipt(c, resp, sess)...)
	}
	if checked != ev.Checked {
		bad.add("evidence.checked", "states %d, check steps ran %d", ev.Checked, checked)
	}
	// Usage: each answered run reports 1 prompt token; a run that failed
	// reports none, and a check run is not counted. A cancelled run reports
	// none, unless its session ignores cancellation (a stub): the engine
	// may receive its late answer, token and all, before the call returns,
	// and the usage counts what the runs reported.
	tokens := int64(0)
	if ev.Usage != nil {
		tokens = ev.Usage.PromptTokens
	}
	late := 0
	for i, l := range ev.Verdicts {
		if l == router.LabelCancelled && i < len(sess) && r.beh[sess[i]].stub {
			late++
		}
	}
	if tokens < int64(answered) || tokens > int64(answered+late) {
		bad.add("evidence.usage", "usage %d prompt tokens, %d runs answered (and %d cut short that may have answered late)", tokens, answered, late)
	}

	// Payment: per_run × launched (at most the hold) for a definitive
	// verdict, void otherwise.
	if p := ev.Payment; p == nil {
		bad.add("evidence.payment", "absent on an escrowed call")
	} else {
		want := recomputeTerms.Commit(resp.Status, ev.Launched)
		capture := "0"
		if resp.Status == trust.StatusValid || resp.Status == trust.StatusInvalid {
			capture = fmt.Sprint(min(uint64(ev.Launched)*recomputeTerms.PerRun, recomputeTerms.Held))
		}
		if p.Capture != capture || *p != *want {
			bad.add("evidence.payment", "%+v; status %s, launched %d: capture %s", *p, resp.Status, ev.Launched, capture)
		}
	}
	if c.judged {
		return append(bad, r.checkJudged(c, resp, sess)...)
	}

	// Each run's label is what its worker answers, or CANCELLED.
	for i, l := range ev.Verdicts {
		b := r.beh[sess[i]]
		want := router.Label(b.verdict)
		switch {
		case b.fail:
			want = router.LabelError
		case b.hang:
			want = router.LabelTimeout
		case c.mode == "delegation":
			want = router.LabelOK
		}
		if l != want && l != router.LabelCancelled && !(want == router.LabelTimeout && l == router.LabelError) {
			bad.add("evidence.verdicts", "run %d on session %d labelled %s, its worker answers %s", i, sess[i], l, want)
		}
	}

	// The winner: the verdict the status names, or a delegation's result.
	isDeleg := c.mode == "delegation"
	accepted := false
	var winLabel router.Label
	switch resp.Status {
	case trust.StatusValid, trust.StatusSellerValid:
		accepted, winLabel = true, router.Label(router.VerdictValid)
	case trust.StatusInvalid, trust.StatusSellerInvalid:
		accepted, winLabel = true, router.Label(router.VerdictInvalid)
	case trust.StatusNeedsSpec:
		accepted, winLabel = true, router.Label(router.VerdictNeedsSpec)
	case trust.StatusRetry:
		// A RETRY verdict that won: the retry reason says the replicas asked.
		if ri := resp.RetryInstructions; ri != nil && strings.HasPrefix(ri.Reason, "the replicas asked for a retry") {
			accepted, winLabel = true, router.Label(router.VerdictRetry)
		}
	case trust.StatusInconclusive:
		// An arbitration answers INCONCLUSIVE for a RETRY or NEEDS_SPEC
		// winner it accepted as well as for none, with no retry
		// instructions either way (9.3); its disagreements tell them
		// apart, listing every run not cancelled when nothing was
		// accepted, else those that did not back the winner.
		winLabel, accepted = acceptedUnlisted(ev)
	}
	if isDeleg {
		accepted, winLabel = resp.Status == trust.StatusValid, router.LabelOK
	}

	// The votes: the answered runs, less a numeric run without a number;
	// each vote's group is its label, text or number.
	backs := func(i int) (string, bool) {
		l := ev.Verdicts[i]
		if failedLabel(l) || l == router.LabelCancelled {
			return "", false
		}
		if !isDeleg {
			return string(l), true
		}
		b := r.beh[sess[i]]
		if !c.numeric {
			return b.text, true
		}
		f, ok := numberOf(b.num)
		return fmt.Sprint(f), ok
	}
	groups := map[string]int{}
	nv := 0
	for i := range ev.Verdicts {
		if k, ok := backs(i); ok {
			groups[k]++
			nv++
		}
	}
	// 9.2: the votes v from the body alone, answered less the no-vote runs.
	if v := ev.Answered - noVotes(ev); v != nv {
		bad.add("evidence.answered−no vote", "answered %d less %d no-vote runs is %d votes; the sessions cast %d", ev.Answered, noVotes(ev), v, nv)
	}
	winKey := string(winLabel)
	if isDeleg {
		winKey = resultKey(resp.Result, c.numeric)
	}
	a := -1 // the runs that back the winner, when known
	switch {
	case ev.Dissent != nil:
		a = 1
	case accepted:
		a = groups[winKey]
	case nv > 0:
		// Nothing accepted: the agreement is some group's share.
		x := ev.Agreement * float64(nv)
		if math.Abs(x-math.Round(x)) > 1e-9 {
			bad.add("evidence.agreement", "agreement %v over %d votes is no whole count", ev.Agreement, nv)
			break
		}
		a = int(math.Round(x))
		found := a == 0
		for _, n := range groups {
			found = found || n == a
		}
		if !found {
			bad.add("evidence.agreement", "agreement %v × %d votes = %d, the size of no group %v", ev.Agreement, nv, a, groups)
		}
	}
	if a >= 0 && nv > 0 && !approxEqual(ev.Agreement, float64(a)/float64(nv)) {
		bad.add("evidence.agreement", "states %v; %d of %d votes back the winner (groups %v)", ev.Agreement, a, nv, groups)
	}

	// Disagreements: every run not cancelled that does not back an accepted
	// winner, each with its run's label and session.
	var wantDis, gotDis []int
	for i, l := range ev.Verdicts {
		if l == router.LabelCancelled {
			continue
		}
		k, ok := backs(i)
		agrees := accepted && ok && k == winKey
		if ev.Dissent != nil {
			agrees = sess[i] == router.SessionID(ev.Dissent.Session)
		}
		if !agrees {
			wantDis = append(wantDis, i)
		}
	}
	for _, d := range ev.Disagreements {
		gotDis = append(gotDis, d.Replica)
		if d.Replica >= len(ev.Verdicts) || ev.Verdicts[d.Replica] != d.Label || sess[d.Replica] != d.SessionID {
			bad.add("evidence.disagreements", "disagreement %+v does not match its run", d)
		}
	}
	if ev.Leader == nil && !slices.Equal(gotDis, wantDis) {
		bad.add("evidence.disagreements", "lists runs %v, want %v (status %s, verdicts %v)", gotDis, wantDis, resp.Status, ev.Verdicts)
	}

	bad = append(bad, r.checkConfidence(c, resp, a, nv, winLabel, accepted)...)
	bad = append(bad, r.checkStatus(c, resp, a, nv, accepted, winLabel)...)
	return append(bad, r.checkReceipt(c, resp, sess)...)
}

// acceptedUnlisted returns the label of the answered runs that ev does
// not list as disagreements, and whether there are such runs, all of one
// label: the winner the call accepted, which its status may not name.
func acceptedUnlisted(ev trust.Evidence) (router.Label, bool) {
	listed := map[int]bool{}
	for _, d := range ev.Disagreements {
		listed[d.Replica] = true
	}
	var win router.Label
	for i, l := range ev.Verdicts {
		if listed[i] || failedLabel(l) || l == router.LabelCancelled {
			continue
		}
		if win != "" && l != win {
			return "", false
		}
		win = l
	}
	return win, win != ""
}

// checkConfidence checks the confidence and its calibration basis: with
// reputation off Posterior(a, votes − a) (6.4); with reputation on the basis
// read as 6.5 and 9.2 say, or the dissent rule's (won+1)/(won+lost+2).
func (r *recomputeRig) checkConfidence(c recomputeCall, resp *trust.Response, a, nv int, winLabel router.Label, accepted bool) mismatches {
	var bad mismatches
	ev := resp.Evidence
	if a < 0 || ev.Leader != nil || ev.Dissent != nil {
		a = -1
	}
	if a >= 0 && !approxEqual(posteriorExact(a, nv-a), consensus.Posterior(a, nv-a)) {
		bad.add("consensus.Posterior", "Posterior(%d,%d) = %v, the sum %v", a, nv-a, consensus.Posterior(a, nv-a), posteriorExact(a, nv-a))
	}
	if !r.repOn {
		if a >= 0 {
			want := 0.0
			if nv > 0 {
				want = posteriorExact(a, nv-a)
			}
			if !approxEqual(resp.Confidence, want) {
				bad.add("confidence", "states %v; reputation off: Posterior(%d, %d) = %v", resp.Confidence, a, nv-a, want)
			}
		}
		return bad
	}
	b := ev.Calibration
	switch {
	case ev.Dissent != nil:
		d := ev.Dissent
		if want := float64(d.Won+1) / float64(d.Won+d.Lost+2); !approxEqual(resp.Confidence, want) || b != nil {
			bad.add("confidence", "dissent: states %v, calibration %v; want (won+1)/(won+lost+2) = %v uncalibrated", resp.Confidence, b, want)
		}
		return bad
	case b == nil:
		if nv > 0 {
			bad.add("evidence.calibration", "absent with reputation on (status %s)", resp.Status)
		}
		return bad
	}
	if want := readCalibration(b); !approxEqual(resp.Confidence, want) || !approxEqual(want, b.Read()) {
		bad.add("confidence", "states %v; its basis %+v reads %v (Basis.Read %v)", resp.Confidence, *b, want, b.Read())
	}
	if len(b.Points) == 0 && b.Basis != "uncalibrated" {
		bad.add("evidence.calibration.basis", "%q with no point", b.Basis)
	}
	if a < 0 || nv == 0 {
		return bad
	}
	post := posteriorExact(a, nv-a)
	switch {
	case c.mode != "delegation":
		// 6.5: the conservative number is at most the weighted and the count.
		if b.Conservative > post+1e-9 || b.Conservative > b.Uncalibrated+1e-9 {
			bad.add("evidence.calibration.conservative", "%v above min(weighted %v, Posterior(%d,%d) %v)", b.Conservative, b.Uncalibrated, a, nv-a, post)
		}
		if want := c.policy + "/" + string(winLabel); accepted && b.Tier != want {
			bad.add("evidence.calibration.tier", "%q, want %q", b.Tier, want)
		}
	case c.numeric:
		// 6.6: the median's Posterior, before and after the conservative cut.
		if !approxEqual(b.Conservative, post) || !approxEqual(b.Uncalibrated, post) {
			bad.add("evidence.calibration", "numeric: conservative %v, uncalibrated %v; want Posterior(%d,%d) = %v", b.Conservative, b.Uncalibrated, a, nv-a, post)
		}
	case ev.Plurality != nil:
		p := ev.Plurality
		pp := consensus.PluralityPosteriorAt(p.Groups, 0, p.Coincidence, p.Reliability)
		sum := 0
		for _, g := range p.Groups {
			sum += g
		}
		if sum != nv || len(p.Groups) == 0 || p.Groups[0] != a {
			bad.add("evidence.plurality.groups", "%v: the votes are %d, the winner's %d", p.Groups, nv, a)
		}
		if b.Conservative > pp+1e-9 {
			bad.add("evidence.calibration.conservative", "%v above PluralityPosteriorAt(%v) = %v", b.Conservative, p.Groups, pp)
		}
		if want, how := r.adaptiveUncalibrated(resp, a, nv); c.policy == "adaptive" && b.Tier == "adaptive" && !approxEqual(b.Uncalibrated, want) {
			bad.add("evidence.calibration.uncalibrated", "adaptive plurality: %v, want %s = %v", b.Uncalibrated, how, want)
		}
	}
	return bad
}

// checkStatus checks that the status is the tier's function of the counts
// (9.1, 9.2), and for an adaptive delegation that 9.2's recipe from the body
// alone (v = answered less the no-vote runs, a = agreement × v, VALID exactly
// when a ≥ 2 and the confidence is above the floor) gives the counts and
// the status.
func (r *recomputeRig) checkStatus(c recomputeCall, resp *trust.Response, a, nv int, accepted bool, winLabel router.Label) mismatches {
	var bad mismatches
	ev := resp.Evidence
	if (resp.Status == trust.StatusRetry || resp.Status == trust.StatusNeedsSpec) != (resp.RetryInstructions != nil) {
		bad.add("retry_instructions", "status %s, retry_instructions %v", resp.Status, resp.RetryInstructions)
	}
	if a < 0 || ev.Leader != nil || ev.Dissent != nil {
		return bad
	}
	lone, lbad := checkLone(c, resp, a, nv, r.escalation)
	bad = append(bad, lbad...)
	strict := a >= 2 && 2*a > nv
	if c.mode != "delegation" {
		switch c.policy {
		case "fast":
			first := ev.Verdicts[0]
			if nv == 1 && !accepted && first != router.Label(router.VerdictRetry) && !(c.mode == "arbitration" && first == router.Label(router.VerdictNeedsSpec)) {
				bad.add("status", "fast: one answer %v, status %s", ev.Verdicts, resp.Status)
			}
		case "safe", "adaptive":
			if strict && !accepted {
				bad.add("status", "%s: strict majority %d of %d, status %s", c.policy, a, nv, resp.Status)
			}
			if accepted && !strict && !lone {
				if !r.repOn {
					bad.add("status", "%s: accepted %s with %d of %d, reputation off", c.policy, resp.Status, a, nv)
				} else if resp.Confidence <= 0.5 && c.policy == "safe" {
					bad.add("status", "safe: weighted winner %d of %d accepted at confidence %v", a, nv, resp.Confidence)
				}
			}
		case "oracle":
			if want := nv >= 3 && a == nv; want != accepted {
				bad.add("status", "oracle: %d of %d votes back the winner, status %s", a, nv, resp.Status)
			}
		}
		return bad
	}
	valid := resp.Status == trust.StatusValid
	switch c.policy {
	case "adaptive":
		v := ev.Answered - noVotes(ev)
		x := ev.Agreement * float64(v)
		if math.Abs(x-float64(a)) > 1e-9 {
			bad.add("evidence.agreement×votes", "9.2: a = agreement × v = %v × %d = %v, but %d runs back the result", ev.Agreement, v, x, a)
		}
		ar := int(math.Round(x))
		want, how := posteriorExact(ar, v-ar), fmt.Sprintf("Posterior(a, v − a) = Posterior(%d, %d)", ar, v-ar)
		if !c.numeric {
			want, how = r.adaptiveUncalibrated(resp, ar, v)
		}
		if b := ev.Calibration; r.repOn && b != nil && (c.numeric || b.Tier == "adaptive") && !approxEqual(b.Uncalibrated, want) {
			bad.add("evidence.calibration.uncalibrated", "9.2: %s = %v, stated %v", how, want, b.Uncalibrated)
		}
		// 9.2: the weighted tally stands only when the number it
		// states reaches the stop's threshold.
		if cs := snapshotOf(resp); !c.numeric && cs != nil && cs.Strategy == "weighted" && resp.Confidence < trust.DefaultWeightedStopThreshold {
			bad.add("confidence", "9.2: the weighted tally stood at %v, below %v", resp.Confidence, trust.DefaultWeightedStopThreshold)
		}
		if want := ar >= 2 && resp.Confidence > trust.DefaultPluralityFloor; valid != want && !lone {
			bad.add("status", "9.2: a = %d of v = %d, confidence %v: VALID is %v, status %s", ar, v, resp.Confidence, want, resp.Status)
		}
	case "safe":
		if strict && !valid {
			bad.add("status", "safe delegation: strict majority %d of %d, status %s", a, nv, resp.Status)
		}
	case "oracle":
		if want := nv >= 3 && a == nv; want != valid {
			bad.add("status", "oracle delegation: %d of %d, status %s", a, nv, resp.Status)
		}
	}
	return bad
}

// adaptiveUncalibrated is 9.2's number before calibration of an adaptive
// delegation of an open answer over reputation whose winner a of the v
// votes back, and how it is computed: Posterior(a, v − a), unless the
// weighted tally stands (its pooled consensus snapshot's strategy is
// "weighted" rather than "majority"), where it is 6.5's conservative
// number, the smaller of that Posterior and the weighted confidence of the
// snapshot's weights, summed over the groups of equal answers.
func (r *recomputeRig) adaptiveUncalibrated(resp *trust.Response, a, v int) (float64, string) {
	post := posteriorExact(a, v-a)
	how := fmt.Sprintf("Posterior(%d, %d)", a, v-a)
	ev, cs := resp.Evidence, snapshotOf(resp)
	if cs == nil || cs.Strategy != "weighted" || len(cs.Weights) != len(ev.Verdicts) || len(cs.Agreeing) == 0 {
		return post, how
	}
	var sess []router.SessionID
	for _, st := range ev.Steps {
		if !st.Check {
			sess = append(sess, st.Sessions...)
		}
	}
	if len(sess) != len(ev.Verdicts) {
		return post, how
	}
	win := r.beh[sess[cs.Agreeing[0]]].text
	sums := map[string]float64{}
	for i, l := range ev.Verdicts {
		if failedLabel(l) || l == router.LabelCancelled {
			continue
		}
		sums[r.beh[sess[i]].text] += cs.Weights[i]
	}
	scores := []float64{sums[win]}
	for k, s := range sums {
		if k != win {
			scores = append(scores, s)
		}
	}
	w := consensus.Credence(scores, 0, cs.Tempering)
	return min(w, post), fmt.Sprintf("the weighted tally stands: min(Credence(%v, 0, %v), %s)", scores, cs.Tempering, how)
}
