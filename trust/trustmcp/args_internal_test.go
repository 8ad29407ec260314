package trustmcp

import (
	"errors"
	"testing"
)

// The values an ArgumentError lists are its own: changing them changes
// neither what a later call accepts nor what a later error lists.
func TestArgumentError_allowedIsACopy(t *testing.T) {
	_, err := parsePolicy("fastest")
	var ae *ArgumentError
	if !errors.As(err, &ae) || len(ae.Allowed) == 0 {
		t.Fatalf("parsePolicy(%q) = %v, want an ArgumentError listing the tiers", "fastest", err)
	}
	first := ae.Allowed[0]
	ae.Allowed[0] = "fastest"
	if _, err := parsePolicy("fastest"); err == nil {
		t.Errorf("after the error's list changed, %q is accepted", "fastest")
	}
	if _, err := parsePolicy(first); err != nil {
		t.Errorf("after the error's list changed, %q is refused: %v", first, err)
	}
}
