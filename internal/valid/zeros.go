package valid

import (
	"errors"
	"reflect"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// Zeros returns a field error for each of zeros, members of a JSON body
// that give "" or 0 to a field that reads as absent when zero (see
// [jsonbody.Inspect]), whose own rules, `omitempty` aside, refuse that
// value: {"max_steps":0} where max_steps is 1 to 10,000 and absent means
// the server's default. Struct checks skip such a field as absent, so a
// door that took the member would answer with the default in silence.
// Each message says to leave the member out instead.
func (v *Validator) Zeros(zeros []jsonbody.Member) []problem.FieldError {
	var errs []problem.FieldError
	for _, m := range zeros {
		rules, ok := strings.CutPrefix(m.Field.Tag.Get("validate"), "omitempty,")
		if !ok || crossField(rules) {
			continue
		}
		var verrs validator.ValidationErrors
		if !errors.As(v.v.Var(reflect.Zero(m.Field.Type).Interface(), rules), &verrs) {
			continue
		}
		errs = append(errs, problem.FieldError{
			Field:   m.Path,
			Rule:    verrs[0].Tag(),
			Message: v.message(verrs[0], nil) + " (leave the member out for the default)",
		})
	}
	return errs
}

// crossField reports whether rules name a rule that reads other fields,
// which a value checked alone cannot pass.
func crossField(rules string) bool {
	for _, r := range strings.Split(rules, ",") {
		name, _, _ := strings.Cut(r, "=")
		if strings.HasPrefix(name, "required_") || strings.HasPrefix(name, "excluded_") || strings.Contains(name, "field") {
			return true
		}
	}
	return false
}
