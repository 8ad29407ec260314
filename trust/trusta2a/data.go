package trusta2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// The skills, named as the agent card and the MCP tools name them.
const (
	SkillValidateClaim = "validate_claim"
	SkillDelegateTask  = "delegate_task"
	SkillArbitrate     = "arbitrate"
	SkillFactcheck     = "factcheck"
)

// skills lists the skills in the card's order.
var skills = []string{SkillValidateClaim, SkillDelegateTask, SkillArbitrate, SkillFactcheck}

// members are the data part members each skill reads, besides "skill".
var members = map[string][]string{
	SkillValidateClaim: {"claimed_result", "input", "spec", "policy", "receipt"},
	SkillDelegateTask:  {"objective", "input", "policy", "receipt", "agreement", "answer", "tolerance"},
	SkillArbitrate:     {"claimed_result", "dispute_context", "input", "spec", "policy", "receipt"},
	SkillFactcheck:     {"claim", "mode", "replicas"},
}

// InputError is a message this agent cannot read: a missing or malformed
// argument, or a text in none of the forms it reads. The A2A answer is
// the JSON-RPC error "invalid params" (-32602) whose data.error is
// Error().
type InputError struct {
	// Argument names the data part member at fault by its JSON field
	// path, such as "policy", "tolerance.abs" or `["a.b"]`, or "text" or
	// "parts" for the message itself.
	Argument string
	// Message says what is wrong.
	Message string
	// Allowed lists the allowed values or members, when there are few.
	Allowed []string
}

// Error names the argument, what is wrong and what is allowed.
func (e *InputError) Error() string {
	s := e.Argument + ": " + e.Message
	if len(e.Allowed) > 0 {
		s += "; allowed: " + strings.Join(e.Allowed, ", ")
	}
	return s
}

// call is what a message asks for: a trust call or a factcheck.
type call struct {
	skill     string
	trust     *trust.Request
	factcheck *router.FactcheckRequest
}

// args are a call's arguments as JSON values, by member name.
type args map[string]json.RawMessage

// objectOf decodes data, one JSON object, as json.Unmarshal does, but
// keeps each number as written (a json.Number): as a float64, a claimed
// result of 12345678901234567891 would reach the trust call as
// 12345678901234567000, and one of 1e400, which no float64 holds, would
// not reach it at all.
func objectOf(data []byte) (map[string]any, error) {
	var obj map[string]any
	if !json.Valid(data) {
		return nil, json.Unmarshal(data, &obj) // the syntax error, worded as json.Unmarshal words it
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(&obj)
	return obj, err
}

// fromData reads the arguments of a data part: its skill, named or
// implied by its members, and each member as JSON.
func fromData(data map[string]any) (*call, error) {
	a := args{}
	for k, v := range data {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, &InputError{Argument: k, Message: "is not a JSON value: " + err.Error()}
		}
		a[k] = raw
	}
	skill, err := a.skill()
	if err != nil {
		return nil, err
	}
	delete(a, "skill")
	return a.call(skill)
}

// skill returns the skill the arguments name, or the one their members
// imply.
func (a args) skill() (string, error) {
	if raw, ok := a["skill"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil || !slices.Contains(skills, s) {
			return "", &InputError{Argument: "skill", Message: "unknown skill " + string(raw), Allowed: slices.Clone(skills)}
		}
		return s, nil
	}
	switch {
	case a.has("dispute_context"):
		return SkillArbitrate, nil
	case a.has("claimed_result"):
		return SkillValidateClaim, nil
	case a.has("claim"):
		return SkillFactcheck, nil
	case a.has("objective"), a.has("input"):
		return SkillDelegateTask, nil
	}
	return "", &InputError{Argument: "data",
		Message: `names no skill: send claimed_result (validate_claim), objective or input (delegate_task), claimed_result and dispute_context (arbitrate), or claim (factcheck), or name it as "skill"`}
}

// has reports whether member k holds a JSON value other than null.
func (a args) has(k string) bool {
	raw := bytes.TrimSpace(a[k])
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// str returns member k as a string; absent or null is "".
func (a args) str(k string) (string, error) {
	if !a.has(k) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(a[k], &s); err != nil {
		return "", &InputError{Argument: k, Message: "must be a string, got " + string(a[k])}
	}
	return s, nil
}

// choice returns member k, one of allowed, as a string; absent or null
// is "". An empty string is refused: it is none of the values, not the
// default, which is had by leaving the member out (as the HTTP doors and
// the MCP tools' schemas have it).
func (a args) choice(k string, allowed ...string) (string, error) {
	s, err := a.str(k)
	if err == nil && s == "" && a.has(k) {
		return "", &InputError{Argument: k, Message: `is "": leave the argument out for its default`, Allowed: slices.Clone(allowed)}
	}
	return s, err
}

// opt returns member k, or nil when absent or null.
func (a args) opt(k string) json.RawMessage {
	if !a.has(k) {
		return nil
	}
	return a[k]
}

// call builds the call of skill from the arguments, refusing a member the
// skill does not read.
func (a args) call(skill string) (*call, error) {
	allowed := members[skill]
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if !slices.Contains(allowed, k) {
			return nil, &InputError{Argument: jsonbody.MemberPath("", k), Message: "is not an argument of " + skill, Allowed: slices.Clone(allowed)}
		}
	}
	if skill == SkillFactcheck {
		fr, err := a.factcheck()
		if err != nil {
			return nil, err
		}
		return &call{skill: skill, factcheck: fr}, nil
	}
	tr, err := a.trust(skill)
	if err != nil {
		return nil, err
	}
	return &call{skill: skill, trust: tr}, nil
}

// trust builds the trust request of validate_claim, delegate_task or
// arbitrate.
func (a args) trust(skill string) (*trust.Request, error) {
	req := &trust.Request{Policy: trust.PolicySafe}
	policy, err := a.choice("policy", string(trust.PolicyFast), string(trust.PolicySafe), string(trust.PolicyOracle), string(trust.PolicyAdaptive))
	if err != nil {
		return nil, err
	}
	if policy != "" {
		req.Policy = trust.Policy(policy)
	}
	if req.Receipt, err = a.receipt(); err != nil {
		return nil, err
	}
	if a.has("input") {
		if err := json.Unmarshal(a["input"], &req.Task.Input); err != nil {
			return nil, &InputError{Argument: "input",
				Message: `must be a string or a JSON object (or the array form {"kind":"array","items":[...]})`}
		}
	}
	switch skill {
	case SkillValidateClaim:
		req.Mode = trust.ModeValidation
		if !a.has("claimed_result") {
			return nil, &InputError{Argument: "claimed_result", Message: "is required: the result to check, a string or any JSON value"}
		}
		req.Task.ClaimedResult, req.Task.Spec = a["claimed_result"], a.opt("spec")
	case SkillArbitrate:
		req.Mode = trust.ModeArbitration
		if !a.has("claimed_result") {
			return nil, &InputError{Argument: "claimed_result", Message: "is required: the seller's claimed result, a string or any JSON value"}
		}
		if !a.has("dispute_context") {
			return nil, &InputError{Argument: "dispute_context", Message: "is required: who claims what, a string or any JSON value"}
		}
		req.Task.ClaimedResult, req.Task.Spec, req.Task.DisputeContext = a["claimed_result"], a.opt("spec"), a["dispute_context"]
	case SkillDelegateTask:
		req.Mode = trust.ModeDelegation
		objective, err := a.str("objective")
		if err != nil {
			return nil, err
		}
		switch {
		case strings.TrimSpace(objective) == "" && !a.has("input"):
			return nil, &InputError{Argument: "objective", Message: "objective or input is required: what the task is to achieve, or its input"}
		case !a.has("input"):
			req.Task.Input = router.NewStringInput(objective)
		case objective != "":
			req.Task.Spec = trust.JSON(objective)
		}
		if err := a.numeric(&req.Task); err != nil {
			return nil, err
		}
		if err := a.agreement(req); err != nil {
			return nil, err
		}
	}
	if err := req.Validate(); err != nil {
		return nil, fieldError(err)
	}
	return req, nil
}

// agreement reads a delegation's member agreement, as the MCP tool's
// argument: exact (equal answers, the default) or judged (the panel
// judges one session's answer).
func (a args) agreement(req *trust.Request) error {
	s, err := a.choice("agreement", agreements...)
	if err != nil || s == "" {
		return err
	}
	if !slices.Contains(agreements, s) {
		return &InputError{Argument: "agreement", Message: fmt.Sprintf("must be exact or judged, not %q", s), Allowed: slices.Clone(agreements)}
	}
	req.Delegation = &trust.DelegationOptions{Agreement: trust.Agreement(s)}
	return nil
}

// agreements are the values of a delegation's agreement.
var agreements = []string{string(trust.AgreementExact), string(trust.AgreementJudged)}

// numeric reads the members of a delegation that answers a number into
// task: answer, and tolerance, an object of absolute and relative only
// (another member would be a bound silently read as 0).
func (a args) numeric(task *trust.Task) error {
	answer, err := a.choice("answer", string(trust.AnswerNumber))
	if err != nil {
		return err
	}
	task.Answer = trust.Answer(answer)
	if !a.has("tolerance") {
		return nil
	}
	var members map[string]json.RawMessage
	var tol router.Tolerance
	if json.Unmarshal(a["tolerance"], &members) != nil {
		return &InputError{Argument: "tolerance", Message: `must be an object {"absolute": a, "relative": r} of numbers ≥ 0, got ` + string(a["tolerance"])}
	}
	if err := jsonbody.Unmarshal(a["tolerance"], &tol); err != nil {
		var p *problem.Details
		if errors.As(err, &p) && len(p.Errors) > 0 { // a member by its path: tolerance.absolute
			return &InputError{Argument: "tolerance." + p.Errors[0].Field, Message: p.Errors[0].Message}
		}
		return &InputError{Argument: "tolerance", Message: `must be an object {"absolute": a, "relative": r} of numbers ≥ 0, got ` + string(a["tolerance"])}
	}
	if errs := jsonbody.UnknownMembers("tolerance", members, tol); len(errs) > 0 {
		return &InputError{Argument: errs[0].Field, Message: errs[0].Message}
	}
	task.Tolerance = &tol
	return nil
}

// receipt reads the receipt member: none, inline or detached.
func (a args) receipt() (receipt.Request, error) {
	mode, err := a.choice("receipt", string(receipt.DeliveryNone), string(receipt.DeliveryInline), string(receipt.DeliveryDetached))
	if err != nil {
		return receipt.Request{}, err
	}
	switch receipt.Delivery(mode) {
	case "", receipt.DeliveryNone:
		return receipt.Request{}, nil
	case receipt.DeliveryInline, receipt.DeliveryDetached:
		return receipt.Request{Mode: receipt.Delivery(mode), Include: receipt.Include{
			ConsensusSnapshot: true, PolicySnapshot: true, InputHash: true, OutputHash: true, RouterTraceRefs: true,
		}}, nil
	}
	return receipt.Request{}, &InputError{Argument: "receipt", Message: fmt.Sprintf("unknown receipt mode %q", mode),
		Allowed: []string{string(receipt.DeliveryNone), string(receipt.DeliveryInline), string(receipt.DeliveryDetached)}}
}

// factcheck builds the router request of factcheck.
func (a args) factcheck() (*router.FactcheckRequest, error) {
	claim, err := a.str("claim")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(claim) == "" {
		return nil, &InputError{Argument: "claim", Message: "is required: the statement to check"}
	}
	mode, err := a.choice("mode", string(router.FactcheckStandard), string(router.FactcheckRealtime))
	if err != nil {
		return nil, err
	}
	req := &router.FactcheckRequest{Claim: claim, Mode: router.FactcheckMode(mode), Consensus: router.ConsensusRequest{
		Replicas: 3, Aggregation: router.AggregationMajority, DisagreementPolicy: router.DisagreeBestEffort,
	}}
	switch req.Mode {
	case "":
		req.Mode = router.FactcheckStandard
	case router.FactcheckStandard, router.FactcheckRealtime:
	default:
		return nil, &InputError{Argument: "mode", Message: fmt.Sprintf("unknown mode %q", mode),
			Allowed: []string{string(router.FactcheckStandard), string(router.FactcheckRealtime)}}
	}
	if a.has("replicas") {
		// A number, as the MCP tool's schema has it ("5" is refused), read
		// as a double: A2A 1.0 carries a data part as a
		// google.protobuf.Value, whose numbers are doubles, so 5.0 and 5e0
		// are the 5 a client's protobuf writer may write them as.
		var n float64
		if err := json.Unmarshal(a["replicas"], &n); err != nil || n != 3 && n != 5 {
			return nil, &InputError{Argument: "replicas", Message: "must be 3 or 5, got " + string(a["replicas"]), Allowed: []string{"3", "5"}}
		}
		req.Consensus.Replicas = int(n)
	}
	if err := req.Validate(); err != nil {
		return nil, fieldError(err)
	}
	return req, nil
}

// fieldError names the first failing field of a validation error by its
// data part member: task.claimed_result is claimed_result, and a member
// of the object member tolerance keeps its member
// (task.tolerance.absolute is tolerance.absolute).
func fieldError(err error) error {
	var p *problem.Details
	if !errors.As(err, &p) || len(p.Errors) == 0 {
		return &InputError{Argument: "data", Message: err.Error()}
	}
	fe := p.Errors[0]
	arg, member, _ := strings.Cut(strings.TrimPrefix(fe.Field, "task."), ".")
	if arg == "tolerance" && member != "" { // an object member: name it
		arg += "." + member
	}
	return &InputError{Argument: arg, Message: fe.Message}
}
