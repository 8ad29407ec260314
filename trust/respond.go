package trust

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust/internal/decide"
)

// respond builds the response from final, the pooled vote accounting of
// every step.
func (s *Service) respond(req *Request, steps []stepResult, final stepResult, traceID string) *Response {
	resp := &Response{
		Confidence:     final.confidence,
		TraceID:        traceID,
		ServiceVersion: Version,
		Result:         json.RawMessage("null"),
		Evidence: Evidence{
			Agreement:     final.agreement,
			Verdicts:      final.verdicts,
			Disagreements: final.disagreements,
			Launched:      final.out.Replicas,
			Answered:      final.out.Answered,
			Cancelled:     final.out.Cancelled,
			Failed:        final.out.Failed,
			Calibration:   final.calibration,
			Leader:        final.lead,
			Dissent:       final.dissent,
			Plurality:     final.plurality,
			Lone:          final.lone,
			Grouping:      final.grouping,
		},
	}
	for _, st := range steps {
		resp.Evidence.Steps = append(resp.Evidence.Steps, st.step)
		if st.step.Check {
			resp.Evidence.Checked += len(st.runs)
		}
	}
	resp.Evidence.Redundancy = final.out.Replicas
	resp.Evidence.Usage = router.TotalUsage(final.runs)
	ok := final.accepted
	switch req.Mode {
	case ModeDelegation:
		if len(final.result) > 0 {
			resp.Result = final.result
		}
		resp.Status = StatusRetry
		if ok && len(final.result) > 0 && string(final.result) != "null" {
			resp.Status = StatusValid
		}
	case ModeValidation:
		resp.Result = req.Task.ClaimedResult
		resp.Status = StatusRetry
		switch {
		case ok && (final.verdict == router.VerdictValid || final.verdict == router.VerdictInvalid):
			resp.Status = Status(final.verdict)
		case ok && final.verdict == router.VerdictNeedsSpec:
			resp.Status = StatusNeedsSpec
		}
	case ModeArbitration:
		resp.Result = req.Task.ClaimedResult
		resp.Status = StatusInconclusive
		if ok && final.verdict == router.VerdictValid {
			resp.Status = StatusSellerValid
		} else if ok && final.verdict == router.VerdictInvalid {
			resp.Status = StatusSellerInvalid
		}
	}
	resp.RetryInstructions = retryInstructions(req, resp.Status, final, s.rules(req))
	return resp
}

// retryInstructions advise a retry for RETRY and NEEDS_SPEC; nil otherwise.
// rules are the rules req's call was decided by.
func retryInstructions(req *Request, status Status, final stepResult, rules decide.Rules) *RetryInstructions {
	switch status {
	case StatusRetry:
		ri := &RetryInstructions{Policy: stronger(req.Policy), RetryAfterMS: 0}
		out := final.out
		switch {
		case req.numeric() && out.Answered > 0 && out.Agreeing+out.Against == 0:
			ri.Reason = fmt.Sprintf("no number was found: %d of %d runs answered, and no answer holds one", out.Answered, out.Replicas)
		case final.step.Error != "":
			ri.Reason = "the replicas disagreed: " + final.step.Error
		case final.accepted && final.verdict == router.VerdictRetry:
			ri.Reason = "the replicas asked for a retry"
			ri.RetryAfterMS = 1000
			if len(final.reasons) > 0 {
				ri.Reason += ": " + final.reasons[0]
			}
		case out.Answered == 0:
			ri.Reason = fmt.Sprintf("no run answered: %d launched, %d failed, %d cancelled", out.Replicas, out.Failed, out.Cancelled)
			ri.RetryAfterMS = 1000
		case rules.ByPlurality() && out.Agreeing >= 2:
			ri.Reason = fmt.Sprintf("the runs did not settle: the answer %d of %d runs gave states confidence %.3g, not above %v",
				out.Agreeing, out.Agreeing+out.Against, final.confidence, rules.Floor)
		case req.Policy == PolicyAdaptive:
			ri.Reason = fmt.Sprintf("the runs did not settle: %d of %d answers agree after %d runs (%d failed)",
				out.Agreeing, out.Agreeing+out.Against, out.Replicas, out.Failed)
		case req.Policy == PolicyOracle:
			ri.Reason = fmt.Sprintf("oracle answers only when a majority of its replicas answer and none dissents: %d of %d answers agree, %d of %d replicas answered",
				out.Agreeing, out.Agreeing+out.Against, out.Answered, out.Replicas)
		case rules.WeighsWinner(out) && out.Agreeing < 2:
			ri.Reason = fmt.Sprintf("no strict majority of at least two: %d of %d answers agree, and the weighted winner states confidence %.3g, not above one half",
				out.Agreeing, out.Agreeing+out.Against, final.confidence)
		default:
			ri.Reason = fmt.Sprintf("no strict majority of at least two: %d of %d answers agree", out.Agreeing, out.Agreeing+out.Against)
		}
		if n := timedOut(final.runs); n > 0 {
			// Those runs need more time, not a tier that runs more.
			ri.Reason += fmt.Sprintf("; %d of the %d runs ran out of time: retry with more time", n, len(final.runs))
			ri.Policy = req.Policy
		}
		return ri
	case StatusNeedsSpec:
		missing := slices.Clone(final.reasons)
		if len(missing) == 0 {
			missing = []string{"task.spec"}
		}
		return &RetryInstructions{
			Reason:  "the task does not say what a correct result is",
			Policy:  req.Policy,
			Missing: missing,
		}
	}
	return nil
}

// timedOut counts the runs labelled TIMEOUT.
func timedOut(runs []router.Run) int {
	n := 0
	for _, r := range runs {
		if r.Label == router.LabelTimeout {
			n++
		}
	}
	return n
}
