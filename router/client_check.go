package router

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// answerCheck is an answer the Client checks against the contract once it
// is decoded: a remote router's answer is outside input, and a trust
// service that read a label it does not know, or a confidence outside
// [0, 1], would state a verdict of its own from it. replicas is the
// number of replicas the call ran (see askedReplicas).
type answerCheck interface {
	check(replicas int) error
}

func (r *ValidateV1Response) check(int) error {
	return checkSingleVerdict(r.Verdict, r.Confidence)
}

func (r *ValidateV2Response) check(replicas int) error {
	// With policy.redundancy 3 or 5 the answer is a best_effort
	// call's, whose verdict is empty when no replica won; on one
	// session it is the verdict of the one run.
	if replicas > Replicas1 {
		if err := checkVerdict(KindValidate, r.Verdict, r.Confidence); err != nil {
			return err
		}
		return checkRuns(r.Evidence.Runs, verdictLabels(KindValidate), replicas, nil)
	}
	if err := checkSingleVerdict(r.Verdict, r.Confidence); err != nil {
		return err
	}
	if err := checkRuns(r.Evidence.Runs, verdictLabels(KindValidate), replicas, nil); err != nil {
		return err
	}
	for i, run := range r.Evidence.Runs {
		if run.Label != Label(r.Verdict) {
			return fmt.Errorf("evidence.runs[%d]: label %q is not the verdict %q of the call's one run", i, run.Label, r.Verdict)
		}
	}
	return nil
}

// checkSingleVerdict checks the verdict and confidence of a validation
// run on one session, which always gives a verdict.
func checkSingleVerdict(v Verdict, confidence float64) error {
	if v == "" {
		return fmt.Errorf("verdict \"\" is not a verdict of %s (%v)", KindValidate, validVerdicts[KindValidate])
	}
	return checkVerdict(KindValidate, v, confidence)
}

func (r *ValidateV3Response) check(replicas int) error {
	return checkVerdictAnswer(KindValidate, r.Verdict, r.Confidence, r.Evidence.Runs, &r.Consensus, replicas)
}

func (r *FactcheckResponse) check(replicas int) error {
	return checkVerdictAnswer(KindFactcheck, r.Verdict, r.Confidence, r.Evidence.Runs, &r.Consensus, replicas)
}

func (r *DelegateV3Response) check(replicas int) error {
	if err := checkConsensus(&r.Consensus, []Label{LabelOK}, replicas); err != nil {
		return err
	}
	return checkRuns(r.Evidence.Runs, []Label{LabelOK}, replicas, r.Consensus.Verdicts)
}

// askedReplicas returns the number of replicas a call of req runs, which
// its answer's consensus block and runs must speak of: consensus.replicas
// in version 3, policy.redundancy in a version 1 fact check (3 when it is
// absent) and in a version 2 validation (1 when it is absent), and 1 for
// the other calls, which run on one session.
func askedReplicas(req any) int {
	switch r := req.(type) {
	case *DelegateV3Request:
		return r.Consensus.Replicas
	case *ValidateV3Request:
		return r.Consensus.Replicas
	case *FactcheckRequest:
		return r.Consensus.Replicas
	case *FactcheckV1Request:
		return cmp.Or(r.Policy.Redundancy, Replicas3)
	case *ValidateV2Request:
		return cmp.Or(r.Policy.Redundancy, Replicas1)
	}
	return Replicas1
}

// hasBlock reports whether the evidence of a call of op that ran
// replicas replicas holds a consensus block: that of a version 3 call or
// a fact check, or of a version 2 validation of 3 or 5 replicas, but not
// the one run of a single session's (a version 1 validation, a version 1
// or 2 delegation).
func hasBlock(op Operation, replicas int) bool {
	switch op {
	case OpValidateV1, OpDelegateV1, OpDelegateV2:
		return false
	case OpValidateV2:
		return replicas > Replicas1
	}
	return true
}

// answerLabels returns the labels of the replicas that answered op, for
// the operations whose answers or problems' evidence the Client checks;
// nil for the others.
func answerLabels(op Operation) []Label {
	switch op {
	case OpDelegateV1, OpDelegateV2, OpDelegateV3:
		return []Label{LabelOK}
	case OpValidateV1, OpValidateV2, OpValidateV3:
		return verdictLabels(KindValidate)
	case OpFactcheck, OpFactcheckV1:
		return verdictLabels(KindFactcheck)
	}
	return nil
}

// checkProblem returns err, the error of a call of op that ran replicas
// replicas, unless it is a problem whose extra, the evidence of a
// validation or delegation (versions 1 to 3) or fact check
// ({"runs":[...],"consensus":{...}}, or the one run of a single
// session's), breaks the contract the answer's evidence keeps: then an
// error wrapping ErrMalformedResponse that names what is wrong, and not
// the problem, whose runs a trust service would count as votes.
func checkProblem(op Operation, replicas int, err error) error {
	var p *Error
	labels := answerLabels(op)
	if labels == nil || !errors.As(err, &p) || len(p.Extra) == 0 {
		return err
	}
	var ev struct {
		Runs      []Run             `json:"runs"`
		Consensus ConsensusResponse `json:"consensus"`
	}
	cerr := json.Unmarshal(p.Extra, &ev)
	if cerr == nil {
		cerr = httpapi.CheckAnswer(p.Extra, &ev)
	}
	if cerr == nil {
		if !hasBlock(op, replicas) {
			cerr = checkRuns(ev.Runs, labels, replicas, nil)
		} else if cerr = checkConsensus(&ev.Consensus, labels, replicas); cerr == nil {
			cerr = checkRuns(ev.Runs, labels, replicas, ev.Consensus.Verdicts)
		}
	}
	if cerr != nil {
		return fmt.Errorf("router: %s problem %d %s: %w: extra: %v", op, p.Status, p.Code, ErrMalformedResponse, cerr)
	}
	return err
}

// checkVerdictAnswer checks a validate or fact-check answer of kind to a
// call of replicas replicas: its verdict (empty when no replica won), its
// confidence, its consensus block and its runs.
func checkVerdictAnswer(kind Kind, v Verdict, confidence float64, runs []Run, c *ConsensusResponse, replicas int) error {
	if err := checkVerdict(kind, v, confidence); err != nil {
		return err
	}
	labels := verdictLabels(kind)
	if err := checkConsensus(c, labels, replicas); err != nil {
		return err
	}
	return checkRuns(runs, labels, replicas, c.Verdicts)
}

// checkVerdict checks an answer's verdict, one of kind's or empty when no
// replica won, and its confidence.
func checkVerdict(kind Kind, v Verdict, confidence float64) error {
	if verdicts := validVerdicts[kind]; v != "" && !slices.Contains(verdicts, v) {
		return fmt.Errorf("verdict %q is not a verdict of %s (%v)", v, kind, verdicts)
	}
	if !unit(confidence) {
		return fmt.Errorf("confidence %v is outside [0, 1]", confidence)
	}
	return nil
}

// verdictLabels returns the verdicts of kind as the labels of the
// replicas that gave them.
func verdictLabels(kind Kind) []Label {
	verdicts := validVerdicts[kind]
	labels := make([]Label, len(verdicts))
	for i, v := range verdicts {
		labels[i] = Label(v)
	}
	return labels
}

// checkConsensus checks the consensus block of a call of replicas
// replicas, whose replicas that answered carry one of answered as their
// label: it counts those replicas, and gives each one verdict when it
// lists any.
func checkConsensus(c *ConsensusResponse, answered []Label, replicas int) error {
	if c.Replicas != replicas || c.Verdicts != nil && len(c.Verdicts) != replicas {
		return fmt.Errorf("consensus: replicas %d with %d verdicts, for a call of %d replicas", c.Replicas, len(c.Verdicts), replicas)
	}
	if !unit(c.Agreement) || !unit(c.Confidence) {
		return fmt.Errorf("consensus: agreement %v or confidence %v is outside [0, 1]", c.Agreement, c.Confidence)
	}
	for i, l := range c.Verdicts {
		if !known(l, answered) {
			return fmt.Errorf("consensus.verdicts[%d]: %q is not a label of this answer (%v, %s, %s or %s)", i, l, answered, LabelTimeout, LabelError, LabelCancelled)
		}
	}
	for i, r := range c.Agreeing {
		if r < 0 || r >= len(c.Verdicts) || i > 0 && r <= c.Agreeing[i-1] {
			return fmt.Errorf("consensus.agreeing[%d]: replica %d is not a replica of consensus.verdicts, in order", i, r)
		}
	}
	return nil
}

// checkRuns checks the runs of a call of replicas replicas: each a
// distinct replica, of a known label, the one verdicts (nil for an answer
// without a consensus block) gives it, its numbers within their bounds.
func checkRuns(runs []Run, answered []Label, replicas int, verdicts []Label) error {
	seen := make(map[int]bool, len(runs))
	for i, r := range runs {
		switch {
		case r.Replica < 0 || r.Replica >= replicas || seen[r.Replica]:
			return fmt.Errorf("evidence.runs[%d]: replica %d is outside the call's %d, or repeated", i, r.Replica, replicas)
		case !known(r.Label, answered):
			return fmt.Errorf("evidence.runs[%d]: label %q is not a label of this answer", i, r.Label)
		case len(verdicts) > 0 && r.Label != verdicts[r.Replica]:
			return fmt.Errorf("evidence.runs[%d]: label %q is not consensus.verdicts[%d], %q", i, r.Label, r.Replica, verdicts[r.Replica])
		case !unit(r.Confidence):
			return fmt.Errorf("evidence.runs[%d]: confidence %v is outside [0, 1]", i, r.Confidence)
		case r.Reliability != nil && !unit(*r.Reliability):
			return fmt.Errorf("evidence.runs[%d]: reliability %v is outside [0, 1]", i, *r.Reliability)
		case r.Weight != nil && (!finite(*r.Weight) || *r.Weight < 0):
			return fmt.Errorf("evidence.runs[%d]: weight %v is not a number of at least 0", i, *r.Weight)
		}
		seen[r.Replica] = true
	}
	return nil
}

// known reports whether l is one of answered, or the label of a replica
// that gave no answer.
func known(l Label, answered []Label) bool {
	return slices.Contains(answered, l) || l == LabelTimeout || l == LabelError || l == LabelCancelled
}

// unit reports whether x is a number in [0, 1].
func unit(x float64) bool { return x >= 0 && x <= 1 }
