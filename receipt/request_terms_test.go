package receipt_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// TestRequest_FieldErrors_terms checks the rules between members: a
// block that asks for no receipt sets nothing else, counterparties need a
// shared or public visibility, and none is named twice. Each is refused,
// never dropped.
func TestRequest_FieldErrors_terms(t *testing.T) {
	required := func(msg string) receipt.FieldError {
		return receipt.FieldError{Field: "receipt.mode", Rule: "required", Message: msg}
	}
	noMode := required("is required when other receipt members are given: inline or detached")
	noneMode := required("must be inline or detached when other receipt members are given; none asks for no receipt")
	private := receipt.FieldError{Field: "receipt.counterparties", Rule: "shared_only",
		Message: "name who may read a shared receipt; visibility is private"}
	byDefault := private
	byDefault.Message += " (the default)"
	repeated := func(name string) receipt.FieldError {
		return receipt.FieldError{Field: "receipt.counterparties", Rule: "unique",
			Message: `must not repeat a name, got "` + name + `" more than once`}
	}
	acme := []string{"acme"}
	tests := []struct {
		name string
		req  receipt.Request
		want []receipt.FieldError
	}{
		{"empty block", receipt.Request{}, nil},
		{"none alone", receipt.Request{Mode: "none"}, nil},
		{"false flags ask for nothing", receipt.Request{Include: receipt.Include{}}, nil},
		{"no counterparties", receipt.Request{Counterparties: []string{}}, nil},
		{"shared without mode", receipt.Request{Visibility: "shared", Counterparties: acme}, []receipt.FieldError{noMode}},
		{"include without mode", receipt.Request{Include: receipt.Include{OutputHash: true}}, []receipt.FieldError{noMode}},
		{"ttl without mode", receipt.Request{TTL: "7d"}, []receipt.FieldError{noMode}},
		{"visibility without mode", receipt.Request{Visibility: "private"}, []receipt.FieldError{noMode}},
		{"include with none", receipt.Request{Mode: "none", Include: receipt.Include{InputHash: true}}, []receipt.FieldError{noneMode}},
		{"ttl with none", receipt.Request{Mode: "none", TTL: "30d"}, []receipt.FieldError{noneMode}},
		{"counterparties alone", receipt.Request{Counterparties: acme}, []receipt.FieldError{noMode, byDefault}},
		{"shared", receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: acme}, nil},
		{"public, granted as shared", receipt.Request{Mode: "detached", Visibility: "public", Counterparties: acme}, nil},
		{"private", receipt.Request{Mode: "inline", Visibility: "private", Counterparties: acme}, []receipt.FieldError{private}},
		{"private by default", receipt.Request{Mode: "inline", Counterparties: acme}, []receipt.FieldError{byDefault}},
		{"private without counterparties", receipt.Request{Mode: "inline", Visibility: "private"}, nil},
		{"a repeat", receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{"acme", "acme"}},
			[]receipt.FieldError{repeated("acme")}},
		{"each repeat once", receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{"b", "a", "b", "a", "b"}},
			[]receipt.FieldError{repeated("b"), repeated("a")}},
		{"names differ by case", receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{"acme", "Acme"}}, nil},
		{"empty names are named by index only", receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{"", ""}},
			[]receipt.FieldError{
				{Field: "receipt.counterparties[0]", Rule: "required", Message: "must be a name of 1 to 200 characters"},
				{Field: "receipt.counterparties[1]", Rule: "required", Message: "must be a name of 1 to 200 characters"},
			}},
		{"a name of 200 characters, 400 bytes", receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{strings.Repeat("ü", 200)}}, nil},
		{"a name of 201 characters", receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{"acme", strings.Repeat("a", 201)}},
			[]receipt.FieldError{{Field: "receipt.counterparties[1]", Rule: "max", Message: "must be a name of 1 to 200 characters"}}},
		{"blank names are named by index only", receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{"acme", " ", " ", "\t\n"}},
			[]receipt.FieldError{
				{Field: "receipt.counterparties[1]", Rule: "text", Message: "must hold text, not white space only"},
				{Field: "receipt.counterparties[2]", Rule: "text", Message: "must hold text, not white space only"},
				{Field: "receipt.counterparties[3]", Rule: "text", Message: "must hold text, not white space only"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.req.FieldErrors("receipt")); diff != "" {
				t.Errorf("FieldErrors (-want +got):\n%s", diff)
			}
		})
	}
}
