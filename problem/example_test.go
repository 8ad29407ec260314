package problem_test

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/vouchkit/vouch/problem"
)

// A caller tells problems apart by their code, never by their text:
// errors.As finds the *Details inside any error a router or trust call
// returns.
func ExampleDetails() {
	err := fmt.Errorf("validating the delivery: %w",
		problem.New(http.StatusServiceUnavailable, problem.CodeInsufficientSessions, "3 replicas asked for, 2 healthy sessions"))

	var p *problem.Details
	if errors.As(err, &p) && p.Code == problem.CodeInsufficientSessions {
		fmt.Println("back off and retry:", p.Status, p.Detail)
	}
	// Output: back off and retry: 503 3 replicas asked for, 2 healthy sessions
}

// Encode writes a problem body as a curl shows it: a detail quoting
// "<n>d" reads as written.
func ExampleEncode() {
	p := problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, `receipt.ttl: "<n>d" is not a number of days`)
	fmt.Print(string(problem.Encode(p)))
	// Output: {"type":"urn:vouch:problem:invalid_request","title":"Bad Request","status":400,"detail":"receipt.ttl: \"<n>d\" is not a number of days","code":"invalid_request"}
}
