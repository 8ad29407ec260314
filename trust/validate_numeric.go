package trust

import (
	"math"

	"github.com/vouchkit/vouch/problem"
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
