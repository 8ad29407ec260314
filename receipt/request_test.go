package receipt_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/receipt"
)

func TestRequest_FieldErrors(t *testing.T) {
	tests := []struct {
		req  receipt.Request
		want []string // failing field paths
	}{
		{receipt.Request{}, nil},
		{receipt.Request{Mode: "none"}, nil},
		{receipt.Request{Mode: "inline", TTL: "7d", Visibility: "private"}, nil},
		{receipt.Request{Mode: "detached", TTL: "99999d", Visibility: "public"}, nil},
		{receipt.Request{Mode: "attached"}, []string{"receipt.mode"}},
		{receipt.Request{Mode: "INLINE"}, []string{"receipt.mode"}},
		{receipt.Request{Mode: "inline", TTL: "0d"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", TTL: "07d"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", TTL: "7"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", TTL: "7h"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", TTL: "-7d"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", TTL: "+7d"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", TTL: "d"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", TTL: " 7d"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", TTL: "100000d"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", TTL: "7dd"}, []string{"receipt.ttl"}},
		{receipt.Request{Mode: "inline", Visibility: "everyone"}, []string{"receipt.visibility"}},
		{receipt.Request{Mode: "x", TTL: "x", Visibility: "x"}, []string{"receipt.mode", "receipt.ttl", "receipt.visibility"}},
		{receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{"bob"}}, nil},
		{receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{"bob", "b\x00ob"}}, []string{"receipt.counterparties[1]"}},
		{receipt.Request{Mode: "inline", Visibility: "shared", Counterparties: []string{"b\xffob", "bob"}}, []string{"receipt.counterparties[0]"}},
	}
	for _, tc := range tests {
		var got []string
		for _, fe := range tc.req.FieldErrors("receipt") {
			got = append(got, fe.Field)
			if fe.Message == "" || fe.Rule == "" {
				t.Errorf("%+v: field error %+v lacks a rule or message", tc.req, fe)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("FieldErrors(%+v) paths (-want +got):\n%s", tc.req, diff)
		}
		err := tc.req.Validate()
		var p *receipt.Error
		if (err == nil) != (tc.want == nil) || (err != nil && (!errors.As(err, &p) || p.Status != 400)) {
			t.Errorf("Validate(%+v) = %v; want a 400 *Error iff fields fail", tc.req, err)
		}
	}
}

func TestRequest_FieldErrors_prefix(t *testing.T) {
	errs := receipt.Request{Mode: "inline", TTL: "x"}.FieldErrors("")
	if len(errs) != 1 || errs[0].Field != "ttl" {
		t.Errorf("FieldErrors(\"\") = %+v, want one error on ttl", errs)
	}
	errs = receipt.Request{Mode: "inline", TTL: "x"}.FieldErrors("options.receipt")
	if len(errs) != 1 || errs[0].Field != "options.receipt.ttl" {
		t.Errorf("FieldErrors(options.receipt) = %+v, want one error on options.receipt.ttl", errs)
	}
}

func TestRequest_decode(t *testing.T) {
	var got receipt.Request
	err := jsonbody.Unmarshal([]byte(`{"mode":"detached","include":{"input_hash":true,"router_trace_refs":true},"ttl":"30d","visibility":"shared"}`), &got)
	if err != nil {
		t.Fatal(err)
	}
	want := receipt.Request{Mode: "detached", Include: receipt.Include{InputHash: true, RouterTraceRefs: true}, TTL: "30d", Visibility: "shared"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded request (-want +got):\n%s", diff)
	}
	// A flag that is not a boolean is named by its path.
	err = jsonbody.Unmarshal([]byte(`{"include":{"input_hash":"yes"}}`), &got)
	var p *receipt.Error
	if !errors.As(err, &p) || len(p.Errors) != 1 || p.Errors[0].Field != "include.input_hash" {
		t.Errorf("decoding a string flag = %v, want a field error on include.input_hash", err)
	}
}

func TestRequest_Requested(t *testing.T) {
	for mode, want := range map[receipt.Delivery]bool{"": false, "none": false, "inline": true, "detached": true, "bogus": false} {
		if got := (receipt.Request{Mode: mode}).Requested(); got != want {
			t.Errorf("Request{Mode: %q}.Requested() = %v, want %v", mode, got, want)
		}
	}
}
