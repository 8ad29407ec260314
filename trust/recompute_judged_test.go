package trust_test

// The checks of a judged delegation of the recomputation rig (9.4): its
// candidates and judges name their runs, each run's label is its worker's,
// and the status, result, agreement and confidence are the last candidate's.

import (
	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// checkJudged recomputes a judged delegation's figures from its
// evidence.judging; sess are the sessions of its runs.
func (r *recomputeRig) checkJudged(c recomputeCall, resp *trust.Response, sess []router.SessionID) mismatches {
	var bad mismatches
	ev := resp.Evidence
	j := ev.Judging
	if j == nil || len(j.Candidates) == 0 {
		if resp.Status != trust.StatusRetry {
			bad.add("evidence.judging", "absent, status %s", resp.Status)
		}
		return append(bad, r.checkReceipt(c, resp, sess)...)
	}
	matches := func(run int, l router.Label, id router.SessionID) bool {
		return run < len(ev.Verdicts) && ev.Verdicts[run] == l && sess[run] == id
	}
	producer := map[int]bool{}
	for _, cand := range j.Candidates {
		producer[cand.Run] = true
		if !matches(cand.Run, cand.Label, cand.SessionID) {
			bad.add("evidence.judging.candidates", "candidate %+v does not match its run", cand)
		}
		for _, jd := range cand.Judges {
			if !matches(jd.Run, jd.Label, jd.SessionID) {
				bad.add("evidence.judging.judges", "judge %+v does not match its run", jd)
			}
			if jd.SessionID == cand.SessionID {
				bad.add("evidence.judging.judges", "judge on the producer's session %d", jd.SessionID)
			}
		}
	}
	// A producer's run is OK, a judge's its worker's verdict.
	for i, l := range ev.Verdicts {
		b := r.beh[sess[i]]
		want := router.Label(b.verdict)
		switch {
		case b.fail:
			want = router.LabelError
		case b.hang:
			want = router.LabelTimeout
		case producer[i]:
			want = router.LabelOK
		}
		if l != want && l != router.LabelCancelled && !(want == router.LabelTimeout && l == router.LabelError) {
			bad.add("evidence.verdicts", "judged: run %d on session %d labelled %s, its worker answers %s", i, sess[i], l, want)
		}
	}
	// The status, result and confidence are the last candidate's (9.4).
	last := j.Candidates[len(j.Candidates)-1]
	switch last.Verdict {
	case trust.StatusValid:
		if resp.Status != trust.StatusValid || string(resp.Result) != string(last.Output) || resp.Confidence != last.Confidence {
			bad.add("status", "judged VALID: status %s result %s confidence %v; candidate %s confidence %v", resp.Status, resp.Result, resp.Confidence, last.Output, last.Confidence)
		}
	case trust.StatusInvalid:
		if resp.Status != trust.StatusRetry || string(resp.Result) != "null" || resp.Confidence != 0 {
			bad.add("status", "judged INVALID: status %s result %s confidence %v; want RETRY, null, 0", resp.Status, resp.Result, resp.Confidence)
		}
	case trust.StatusRetry:
		if resp.Status != trust.StatusRetry || string(resp.Result) != string(last.Output) || resp.Confidence != last.Confidence {
			bad.add("status", "judged RETRY: status %s result %s confidence %v; candidate %s confidence %v", resp.Status, resp.Result, resp.Confidence, last.Output, last.Confidence)
		}
	case trust.StatusNeedsSpec:
		if resp.Status != trust.StatusNeedsSpec || string(resp.Result) != "null" {
			bad.add("status", "judged NEEDS_SPEC: status %s result %s", resp.Status, resp.Result)
		}
	}
	// The agreement: the last validation's, among its judges that answered;
	// with reputation off its confidence Posterior(a, votes − a).
	counts := map[router.Label]int{}
	nv := 0
	for _, jd := range last.Judges {
		if !failedLabel(jd.Label) && jd.Label != router.LabelCancelled {
			counts[jd.Label]++
			nv++
		}
	}
	if last.Verdict == trust.StatusValid || last.Verdict == trust.StatusInvalid || last.Verdict == trust.StatusNeedsSpec {
		a := counts[router.Label(last.Verdict)]
		if nv > 0 && ev.Leader == nil && ev.Dissent == nil && !approxEqual(ev.Agreement, float64(a)/float64(nv)) {
			bad.add("evidence.agreement", "judged: %v; the last validation's %d of %d judges back %s", ev.Agreement, a, nv, last.Verdict)
		}
		if !r.repOn && ev.Leader == nil && nv > 0 && last.Verdict != trust.StatusInvalid {
			if want := consensus.Posterior(a, nv-a); !approxEqual(resp.Confidence, want) {
				bad.add("confidence", "judged, reputation off: %v, Posterior(%d,%d) = %v", resp.Confidence, a, nv-a, want)
			}
		}
	}
	if b := ev.Calibration; b != nil && resp.Confidence != 0 && ev.Dissent == nil && !approxEqual(resp.Confidence, readCalibration(b)) {
		bad.add("confidence", "judged: %v; its basis reads %v", resp.Confidence, readCalibration(b))
	}
	return append(bad, r.checkReceipt(c, resp, sess)...)
}
