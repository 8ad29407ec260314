package router

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// answerCheck is an answer the Client checks against the contract once it
// is decoded: a remote router's answer is outside input, and a trust
// service that read a label it does not know, or a confidence outside
// [0, 1], would state a verdict of its own from it.
type answerCheck interface {
	check() error
}

func (r *ValidateV1Response) check() error {
	if r.Verdict == "" {
		return fmt.Errorf("verdict \"\" is not a verdict of %s (%v)", KindValidate, validVerdicts[KindValidate])
	}
	return checkVerdict(KindValidate, r.Verdict, r.Confidence)
}

func (r *ValidateV2Response) check() error {
	// With policy.redundancy 3 or 5 the answer is a best_effort
	// call's, whose verdict is empty when no replica won.
	if err := checkVerdict(KindValidate, r.Verdict, r.Confidence); err != nil {
		return err
	}
	return checkRuns(r.Evidence.Runs, verdictLabels(KindValidate), 0)
}

func (r *ValidateV3Response) check() error {
	return checkVerdictAnswer(KindValidate, r.Verdict, r.Confidence, r.Evidence.Runs, &r.Consensus)
}

func (r *FactcheckResponse) check() error {
	return checkVerdictAnswer(KindFactcheck, r.Verdict, r.Confidence, r.Evidence.Runs, &r.Consensus)
}

func (r *DelegateV3Response) check() error {
	if err := checkConsensus(&r.Consensus, []Label{LabelOK}); err != nil {
		return err
	}
	return checkRuns(r.Evidence.Runs, []Label{LabelOK}, r.Consensus.Replicas)
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

// checkProblem returns err, the error of a call of op, unless it is a
// problem whose extra, the evidence of a validation or delegation
// (versions 1 to 3) or fact check ({"runs":[...],"consensus":{...}}, or
// the one run of a single session's), breaks the contract the answer's
// evidence keeps: then an error wrapping ErrMalformedResponse that names
// what is wrong, and not the problem, whose runs a trust service would
// count as votes.
func checkProblem(op Operation, err error) error {
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
		if cerr = checkConsensus(&ev.Consensus, labels); cerr == nil {
			cerr = checkRuns(ev.Runs, labels, ev.Consensus.Replicas)
		}
	}
	if cerr != nil {
		return fmt.Errorf("router: %s problem %d %s: %w: extra: %v", op, p.Status, p.Code, ErrMalformedResponse, cerr)
	}
	return err
}

// checkVerdictAnswer checks a validate or fact-check answer of kind: its
// verdict (empty when no replica won), its confidence, its consensus
// block and its runs.
func checkVerdictAnswer(kind Kind, v Verdict, confidence float64, runs []Run, c *ConsensusResponse) error {
	if err := checkVerdict(kind, v, confidence); err != nil {
		return err
	}
	labels := verdictLabels(kind)
	if err := checkConsensus(c, labels); err != nil {
		return err
	}
	return checkRuns(runs, labels, c.Replicas)
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

// checkConsensus checks a consensus block whose replicas that answered
// carry one of answered as their label.
func checkConsensus(c *ConsensusResponse, answered []Label) error {
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

// checkRuns checks the runs of an answer of replicas replicas (0 for an
// answer that does not say): each a distinct replica, of a known label,
// its numbers within their bounds.
func checkRuns(runs []Run, answered []Label, replicas int) error {
	seen := make(map[int]bool, len(runs))
	for i, r := range runs {
		switch {
		case r.Replica < 0 || replicas > 0 && r.Replica >= replicas || seen[r.Replica]:
			return fmt.Errorf("evidence.runs[%d]: replica %d is outside the call's %d, or repeated", i, r.Replica, replicas)
		case !known(r.Label, answered):
			return fmt.Errorf("evidence.runs[%d]: label %q is not a label of this answer", i, r.Label)
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
