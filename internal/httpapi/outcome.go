package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/vouchkit/vouch/problem"
)

// OutcomeProblem returns what a server answers for err, the error of a
// Feedback method: a 404 problem with code unknown_call when err wraps
// unknown, a 409 problem with code reputation_off when it wraps off, and
// err itself otherwise. The 404 says the same whether the call is
// another caller's or none at all.
func OutcomeProblem(err, unknown, off error) error {
	switch {
	case errors.Is(err, unknown):
		return problem.New(http.StatusNotFound, problem.CodeUnknownCall,
			"no call of the caller's with that id is remembered")
	case errors.Is(err, off):
		return problem.New(http.StatusConflict, problem.CodeReputationOff,
			"the server keeps no reputation: an outcome teaches it nothing")
	}
	return err
}

// OutcomeError returns what a client's Feedback returns for err, the error
// of its call: err wrapped in unknown or off when it is a problem with
// code unknown_call or reputation_off, so that errors.Is finds the same
// sentinel as in process and errors.As still reaches the problem; err
// itself otherwise.
func OutcomeError(err, unknown, off error) error {
	var p *problem.Details
	if !errors.As(err, &p) {
		return err
	}
	switch p.Code {
	case problem.CodeUnknownCall:
		return fmt.Errorf("%w: %w", unknown, err)
	case problem.CodeReputationOff:
		return fmt.Errorf("%w: %w", off, err)
	}
	return err
}
