package trustmcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// The allowed values of the arguments that take one of a few.
var (
	policies       = []string{string(trust.PolicyFast), string(trust.PolicySafe), string(trust.PolicyOracle), string(trust.PolicyAdaptive)}
	receiptModes   = []string{string(receipt.DeliveryNone), string(receipt.DeliveryInline), string(receipt.DeliveryDetached)}
	factcheckModes = []string{string(router.FactcheckStandard), string(router.FactcheckRealtime)}
	replicaCounts  = []string{"3", "5"}
	answers        = []string{string(trust.AnswerNumber)}
	agreements     = []string{string(trust.AgreementExact), string(trust.AgreementJudged)}
)

// ArgumentError is a tool argument that is missing or out of range. The
// tools answer it as a tool error (isError) whose text is Error().
type ArgumentError struct {
	// Argument is the argument's name, such as "policy".
	Argument string
	// Message says what is wrong.
	Message string
	// Allowed lists the allowed values, when the argument takes one of a
	// few.
	Allowed []string
}

// Error names the argument, what is wrong with it and the allowed values.
func (e *ArgumentError) Error() string {
	s := "trustmcp: argument " + e.Argument + ": " + e.Message
	if len(e.Allowed) > 0 {
		s += "; allowed: " + strings.Join(e.Allowed, ", ")
	}
	return s
}

// ValidateClaimArgs are the arguments of validate_claim: each field is the argument its
// JSON name names, described by its jsonschema tag in the tool's input
// schema.
type ValidateClaimArgs struct {
	Input         json.RawMessage `json:"input,omitempty" jsonschema:"the task's input: a string or a JSON object; optional"`
	ClaimedResult json.RawMessage `json:"claimed_result" jsonschema:"the result to check: a string or any JSON value; required"`
	Spec          json.RawMessage `json:"spec,omitempty" jsonschema:"what a correct result is: a string, or an object with a schema and constraints; optional"`
	Policy        string          `json:"policy,omitempty" jsonschema:"the trust tier: fast (1 run), safe (3 runs, the default), oracle (5 runs, any dissent answers RETRY), adaptive (at most 5 runs, stopping once the pooled runs settle it)"`
	Receipt       string          `json:"receipt,omitempty" jsonschema:"none (the default), inline (the signed receipt in the answer) or detached (only its receipt_id; fetch it with get_receipt)"`
}

// DelegateTaskArgs are the arguments of delegate_task: each field is the argument its
// JSON name names, described by its jsonschema tag in the tool's input
// schema.
type DelegateTaskArgs struct {
	Objective string          `json:"objective,omitempty" jsonschema:"what is wanted, in plain language; objective or input (or both) is required"`
	Input     json.RawMessage `json:"input,omitempty" jsonschema:"the task's input: a string or a JSON object; objective or input (or both) is required"`
	Policy    string          `json:"policy,omitempty" jsonschema:"the trust tier: fast (1 run), safe (3 runs, the default), oracle (5 runs), adaptive (at most 5 runs, stopping once the pooled runs settle it)"`
	Receipt   string          `json:"receipt,omitempty" jsonschema:"none (the default), inline or detached"`
	Agreement string          `json:"agreement,omitempty" jsonschema:"when the runs' answers agree: exact (the default: equal answers) or judged (one session answers and the others judge its answer, for free text no two models word alike)"`
	Answer    string          `json:"answer,omitempty" jsonschema:"number when the task answers a number: the runs then agree within tolerance around their median (18, 18.0 and \"18\" agree) and the result is the median as a JSON number; absent, outputs agree only when equal as JSON"`
	Tolerance *ToleranceArg   `json:"tolerance,omitempty" jsonschema:"with answer number: how far a number may lie from the median and still agree, |x − m| ≤ max(absolute, relative·|m|); absent, exact numeric equality"`
}

// ToleranceArg is the tolerance argument of delegate_task, whose fields
// are trust.Task.Tolerance's: a number x agrees with the median m when
// |x − m| ≤ max(Absolute, Relative·|m|).
type ToleranceArg struct {
	Absolute float64 `json:"absolute,omitempty" jsonschema:"a distance ≥ 0; 0 when absent"`
	Relative float64 `json:"relative,omitempty" jsonschema:"a share of |m| from 0 to 1; 0 when absent"`
}

// ArbitrateArgs are the arguments of arbitrate: each field is the argument its
// JSON name names, described by its jsonschema tag in the tool's input
// schema.
type ArbitrateArgs struct {
	Input          json.RawMessage `json:"input,omitempty" jsonschema:"the task's input: a string or a JSON object; optional"`
	ClaimedResult  json.RawMessage `json:"claimed_result" jsonschema:"the seller's claimed result: a string or any JSON value; required"`
	Spec           json.RawMessage `json:"spec,omitempty" jsonschema:"what the buyer asked for: a string or an object; optional"`
	DisputeContext json.RawMessage `json:"dispute_context" jsonschema:"the dispute: who claims what, as a string or any JSON value; required"`
	Policy         string          `json:"policy,omitempty" jsonschema:"the trust tier: fast (1 run), safe (3 runs, the default), oracle (5 runs, any dissent answers INCONCLUSIVE), adaptive (at most 5 runs, stopping once the pooled runs settle it)"`
	Receipt        string          `json:"receipt,omitempty" jsonschema:"none (the default), inline or detached"`
}

// FactcheckArgs are the arguments of factcheck: each field is the argument its
// JSON name names, described by its jsonschema tag in the tool's input
// schema.
type FactcheckArgs struct {
	Claim    string `json:"claim" jsonschema:"the statement to check; required"`
	Mode     string `json:"mode,omitempty" jsonschema:"standard (the default) or realtime (grounded in current sources)"`
	Replicas int    `json:"replicas,omitempty" jsonschema:"independent runs: 3 (the default) or 5"`
}

// GetReceiptArgs are the arguments of get_receipt: each field is the argument its
// JSON name names, described by its jsonschema tag in the tool's input
// schema.
type GetReceiptArgs struct {
	ReceiptID string `json:"receipt_id" jsonschema:"the receipt's id, rcpt_ and 26 characters, as a trust answer gave it"`
}

// VerifyReceiptArgs are the arguments of verify_receipt: each field is the argument its
// JSON name names, described by its jsonschema tag in the tool's input
// schema.
type VerifyReceiptArgs struct {
	Receipt json.RawMessage `json:"receipt" jsonschema:"the receipt object to check, as a trust answer or get_receipt gave it (a string holding its JSON is also accepted)"`
}

// present reports whether raw holds a JSON value other than null.
func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

func parsePolicy(s string) (trust.Policy, error) {
	if s == "" {
		return trust.PolicySafe, nil
	}
	for _, p := range policies {
		if s == p {
			return trust.Policy(s), nil
		}
	}
	return "", &ArgumentError{Argument: "policy", Message: fmt.Sprintf("unknown tier %q", s), Allowed: slices.Clone(policies)}
}

// parseReceipt maps the receipt argument onto a receipt block that
// includes every optional member.
func parseReceipt(s string) (receipt.Request, error) {
	switch receipt.Delivery(s) {
	case "", receipt.DeliveryNone:
		return receipt.Request{}, nil
	case receipt.DeliveryInline, receipt.DeliveryDetached:
		return receipt.Request{Mode: receipt.Delivery(s), Include: receipt.Include{
			ConsensusSnapshot: true, PolicySnapshot: true, InputHash: true, OutputHash: true, RouterTraceRefs: true,
		}}, nil
	}
	return receipt.Request{}, &ArgumentError{Argument: "receipt", Message: fmt.Sprintf("unknown receipt mode %q", s), Allowed: slices.Clone(receiptModes)}
}

func parseInput(raw json.RawMessage) (router.Input, error) {
	var in router.Input
	if !present(raw) {
		return in, nil
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, &ArgumentError{Argument: "input",
			Message: `must be a string or a JSON object (or the array form {"kind":"array","items":[...]})`}
	}
	return in, nil
}

// request builds the trust request of validate_claim.
func (a *ValidateClaimArgs) request() (*trust.Request, error) {
	if !present(a.ClaimedResult) {
		return nil, &ArgumentError{Argument: "claimed_result", Message: "is required: the result to check, a string or any JSON value"}
	}
	return build(trust.ModeValidation, a.Input, a.Policy, a.Receipt, trust.Task{ClaimedResult: a.ClaimedResult, Spec: optional(a.Spec)}, nil)
}

// request builds the trust request of delegate_task. The objective is the
// input when there is no input, and the spec when there is one.
func (a *DelegateTaskArgs) request() (*trust.Request, error) {
	hasInput := present(a.Input)
	if strings.TrimSpace(a.Objective) == "" && !hasInput {
		return nil, &ArgumentError{Argument: "objective", Message: "objective or input is required: what the task is to achieve, or its input"}
	}
	if a.Objective != "" && strings.TrimSpace(a.Objective) == "" {
		return nil, &ArgumentError{Argument: "objective", Message: "must hold text: what the task is to achieve (leave it out to give the input alone)"}
	}
	task := trust.Task{Answer: trust.Answer(a.Answer)}
	if t := a.Tolerance; t != nil {
		task.Tolerance = &router.Tolerance{Absolute: t.Absolute, Relative: t.Relative}
	}
	input := a.Input
	if !hasInput {
		raw, _ := json.Marshal(a.Objective)
		input = raw
	} else if a.Objective != "" {
		task.Spec, _ = json.Marshal(a.Objective)
	}
	var opts *trust.DelegationOptions
	switch agreement := trust.Agreement(a.Agreement); agreement {
	case "":
	case trust.AgreementExact, trust.AgreementJudged:
		opts = &trust.DelegationOptions{Agreement: agreement}
	default:
		return nil, &ArgumentError{Argument: "agreement", Message: fmt.Sprintf("must be exact or judged, not %q", a.Agreement), Allowed: slices.Clone(agreements)}
	}
	return build(trust.ModeDelegation, input, a.Policy, a.Receipt, task, opts)
}

// request builds the trust request of arbitrate.
func (a *ArbitrateArgs) request() (*trust.Request, error) {
	if !present(a.ClaimedResult) {
		return nil, &ArgumentError{Argument: "claimed_result", Message: "is required: the seller's claimed result, a string or any JSON value"}
	}
	if !present(a.DisputeContext) {
		return nil, &ArgumentError{Argument: "dispute_context", Message: "is required: who claims what, a string or any JSON value"}
	}
	return build(trust.ModeArbitration, a.Input, a.Policy, a.Receipt,
		trust.Task{ClaimedResult: a.ClaimedResult, Spec: optional(a.Spec), DisputeContext: a.DisputeContext}, nil)
}

// optional drops a JSON null.
func optional(raw json.RawMessage) json.RawMessage {
	if !present(raw) {
		return nil
	}
	return raw
}

// build completes task and checks the request, with the delegation
// options opts (nil for none), as the trust service would, naming a
// failing field by its tool argument.
func build(mode trust.Mode, input json.RawMessage, policy, rcpt string, task trust.Task, opts *trust.DelegationOptions) (*trust.Request, error) {
	p, err := parsePolicy(policy)
	if err != nil {
		return nil, err
	}
	rr, err := parseReceipt(rcpt)
	if err != nil {
		return nil, err
	}
	if task.Input, err = parseInput(input); err != nil {
		return nil, err
	}
	req := &trust.Request{Mode: mode, Policy: p, Task: task, Receipt: rr, Delegation: opts}
	if err := req.Validate(); err != nil {
		return nil, argumentError(err)
	}
	return req, nil
}

// checkArguments refuses what decoding the arguments would take in
// silence, as the HTTP doors refuse it: an argument that is not UTF-8,
// whose bytes would be read as U+FFFD (a receipt would then hash other
// text than the client sent), and a name given twice in one object,
// where the last copy would win. Other faults are the SDK's to report.
func checkArguments(raw json.RawMessage) error {
	var args map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &args) != nil {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if !utf8.Valid(args[name]) {
			return &ArgumentError{Argument: name, Message: "is not valid UTF-8"}
		}
	}
	var p *problem.Details
	if err := jsonbody.Unmarshal(raw, new(any)); errors.As(err, &p) && len(p.Errors) > 0 {
		return &ArgumentError{Argument: p.Errors[0].Field, Message: p.Errors[0].Message}
	}
	return nil
}

// argumentError names the first field error of a trust validation error
// by its tool argument: task.claimed_result is claimed_result,
// delegation.agreement is agreement, and a member of the object argument
// tolerance keeps its member (task.tolerance.absolute is
// tolerance.absolute).
func argumentError(err error) error {
	var p *problem.Details
	if !errors.As(err, &p) || len(p.Errors) == 0 {
		return err
	}
	fe := p.Errors[0]
	arg, member, _ := strings.Cut(strings.TrimPrefix(fe.Field, "task."), ".")
	switch {
	case arg == "delegation" && member != "": // the options are arguments of their own
		arg = member
	case arg == "tolerance" && member != "": // an object argument: name its member
		arg += "." + member
	}
	return &ArgumentError{Argument: arg, Message: fe.Message}
}

// factcheckRequest builds the router request of factcheck.
func (a *FactcheckArgs) request() (*router.FactcheckRequest, error) {
	if strings.TrimSpace(a.Claim) == "" {
		return nil, &ArgumentError{Argument: "claim", Message: "is required: the statement to check"}
	}
	mode := router.FactcheckMode(a.Mode)
	switch mode {
	case "":
		mode = router.FactcheckStandard
	case router.FactcheckStandard, router.FactcheckRealtime:
	default:
		return nil, &ArgumentError{Argument: "mode", Message: fmt.Sprintf("unknown mode %q", a.Mode), Allowed: slices.Clone(factcheckModes)}
	}
	n := a.Replicas
	switch n {
	case 0:
		n = 3
	case 3, 5:
	default:
		return nil, &ArgumentError{Argument: "replicas", Message: fmt.Sprintf("must be 3 or 5, got %d", a.Replicas), Allowed: slices.Clone(replicaCounts)}
	}
	req := &router.FactcheckRequest{
		Claim: a.Claim,
		Mode:  mode,
		Consensus: router.ConsensusRequest{
			Replicas:           n,
			Aggregation:        router.AggregationMajority,
			DisagreementPolicy: router.DisagreeBestEffort,
		},
	}
	if err := req.Validate(); err != nil {
		return nil, argumentError(err)
	}
	return req, nil
}

// receiptArgument returns the receipt argument of verify_receipt as the
// client wrote it in the call's arguments args: receipt.Verifier reads
// the receipt in any spelling, or a string holding its JSON, checks its
// RFC 8785 canonical form and says whether the text was as issued. The
// tool reads the arguments as sent and not as the SDK hands them over,
// decoded and written again (numbers through float64), which would
// round a rewritten number back to the signed one.
func receiptArgument(args json.RawMessage) (json.RawMessage, error) {
	var a VerifyReceiptArgs
	if json.Unmarshal(args, &a) != nil || !present(a.Receipt) {
		return nil, &ArgumentError{Argument: "receipt", Message: "is required: the receipt object, as a trust answer or get_receipt gave it"}
	}
	if c := a.Receipt[0]; c != '{' && c != '"' { // encoding/json copies the value without the space before it
		return nil, &ArgumentError{Argument: "receipt", Message: "must be the receipt object, or a string holding its JSON"}
	}
	return a.Receipt, nil
}
