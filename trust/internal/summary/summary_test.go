package summary

import (
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

func TestRuns(t *testing.T) {
	for n, want := range map[int]string{0: "0 runs", 1: "1 run", 3: "3 runs"} {
		if got := Runs(n); got != want {
			t.Errorf("Runs(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTrust(t *testing.T) {
	bare := &trust.Response{
		Status:     trust.StatusValid,
		Confidence: 1,
		Evidence:   trust.Evidence{Redundancy: 1, Agreement: 1},
		TraceID:    "4bf92f3577b34da6a3ce929d0e0e4736",
	}
	full := &trust.Response{
		Status:     trust.StatusRetry,
		Confidence: 0.4,
		Evidence: trust.Evidence{
			Redundancy: 5,
			Agreement:  0.6,
			Steps:      []trust.Step{{Route: "/api/v3/validate"}, {Route: "/api/v3/arbitrate"}},
			Disagreements: []trust.Disagreement{
				{SessionID: 7, Label: "INVALID", Reason: "17 * 3 is 51"},
				{SessionID: 9, Label: "TIMEOUT"},
			},
		},
		RetryInstructions: &trust.RetryInstructions{Reason: "the runs disagree", Policy: trust.PolicyOracle},
		TraceID:           "4bf92f3577b34da6a3ce929d0e0e4736",
		Receipt:           json.RawMessage(`{"receipt_id":"rcpt_1","issuer":"vouch"}`),
	}
	quiet := &trust.Response{
		Status:     trust.StatusValid,
		Confidence: 0.67,
		Evidence: trust.Evidence{
			Redundancy:    3,
			Agreement:     0.67,
			Disagreements: []trust.Disagreement{{SessionID: 2, Label: "TIMEOUT"}},
		},
		RetryInstructions: &trust.RetryInstructions{Reason: "slow"},
		TraceID:           "t",
		Receipt:           json.RawMessage(`{"issuer":"vouch"}`),
	}
	split := &trust.Response{
		Status:     trust.StatusRetry,
		Confidence: 0.5,
		Evidence: trust.Evidence{
			Redundancy:    2,
			Agreement:     0.5,
			Disagreements: []trust.Disagreement{{SessionID: 1, Label: "VALID"}, {SessionID: 2, Label: "INVALID"}},
		},
		RetryInstructions: &trust.RetryInstructions{Reason: "the runs disagree", Policy: trust.PolicySafe},
		TraceID:           "t",
	}
	for _, tt := range []struct {
		name string
		r    *trust.Response
		want string
	}{
		{"bare", bare, "VALID, confidence 1.00: 1 run, agreement 1.00; trace 4bf92f3577b34da6a3ce929d0e0e4736"},
		{"full", full, "RETRY, confidence 0.40: 5 runs, agreement 0.60 over 2 steps; dissent: session 7 said INVALID (17 * 3 is 51); retry: the runs disagree (policy oracle); receipt rcpt_1; trace 4bf92f3577b34da6a3ce929d0e0e4736"},
		{"split", split, "RETRY, confidence 0.50: 2 runs, agreement 0.50; retry: the runs disagree (policy safe); trace t"},
		{"quiet", quiet, "VALID, confidence 0.67: 3 runs, agreement 0.67; dissent: session 2 said TIMEOUT; retry: slow; trace t"},
	} {
		if got := Trust(tt.r); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestFactcheck(t *testing.T) {
	for _, tt := range []struct {
		r    *router.FactcheckResponse
		want string
	}{
		{&router.FactcheckResponse{Verdict: "FALSE", Confidence: 0.8, Reasons: []string{"the moon is not cheese", "no"}, Consensus: router.ConsensusResponse{Replicas: 5, Agreement: 0.8}},
			"FALSE, confidence 0.80: 5 runs, agreement 0.80; the moon is not cheese"},
		{&router.FactcheckResponse{Consensus: router.ConsensusResponse{Replicas: 1}},
			"no majority, confidence 0.00: 1 run, agreement 0.00"},
	} {
		if got := Factcheck(tt.r); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}
