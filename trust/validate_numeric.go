package trust

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// numericAnswer checks task.answer and task.tolerance beyond their tag
// rules: a numeric answer only in delegation mode and never judged, a
// tolerance only with one, and its bounds finite.
func (r *Request) numericAnswer() []problem.FieldError {
	var errs []problem.FieldError
	if r.Task.Answer != "" && r.Mode != ModeDelegation && r.Mode != "" {
		errs = append(errs, problem.FieldError{Field: "task.answer", Rule: "delegation_only",
			Message: "declares what a delegation answers; a " + string(r.Mode) + " judges a claimed result"})
	}
	if r.Task.Answer == AnswerNumber && r.Delegation.judged() {
		errs = append(errs, problem.FieldError{Field: "delegation.agreement", Rule: "not_numeric",
			Message: `a numeric answer (task.answer "number") is settled by the median within task.tolerance, not by judges`})
	}
	t := r.Task.Tolerance
	if t == nil {
		return errs
	}
	if r.Task.Answer != AnswerNumber {
		errs = append(errs, problem.FieldError{Field: "task.tolerance", Rule: "numeric_only",
			Message: `applies only with task.answer "number"`})
	}
	if math.IsInf(t.Absolute, 1) {
		errs = append(errs, problem.FieldError{Field: "task.tolerance.absolute", Rule: "finite", Message: "must be a finite number ≥ 0"})
	}
	if math.IsInf(t.Relative, 1) {
		errs = append(errs, problem.FieldError{Field: "task.tolerance.relative", Rule: "finite", Message: "must be a finite number ≥ 0"})
	}
	return errs
}

// numeric reports whether req is a delegation that declares a numeric
// answer.
func (r *Request) numeric() bool {
	return r.Mode == ModeDelegation && r.Task.Answer == AnswerNumber
}

// unknownTolerance returns the field errors of the members of an
// envelope's task.tolerance other than absolute and relative, read as
// encoding/json reads the envelope: ignored, a misspelt bound would read
// as 0, exact equality.
func unknownTolerance(body []byte) []problem.FieldError {
	var probe struct {
		Task struct {
			Tolerance map[string]json.RawMessage `json:"tolerance"`
		} `json:"task"`
	}
	_ = json.Unmarshal(body, &probe) // a member of the wrong type is the decoder's error
	return jsonbody.UnknownMembers("task.tolerance", probe.Task.Tolerance, router.Tolerance{})
}

// withFieldErrors adds extra to err, the error of Request.Validate: a
// 400 naming every field, or err itself when it is another error.
func withFieldErrors(err error, extra []problem.FieldError) error {
	if len(extra) == 0 {
		return err
	}
	var p *problem.Details
	if err == nil {
		return problem.Invalid(extra)
	}
	if !errors.As(err, &p) || p.Status != http.StatusBadRequest || p.Code != problem.CodeInvalidRequest {
		return err
	}
	return problem.Invalid(append(p.Errors, extra...))
}
