package router_test

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/router"
)

// wireFiles maps each spec-shaped example in testdata to the type it holds.
var wireFiles = []struct {
	file string
	new  func() any
}{
	{"delegate_v1_request.json", func() any { return new(router.DelegateV1Request) }},
	{"delegate_v1_response.json", func() any { return new(router.DelegateV1Response) }},
	{"validate_v1_request.json", func() any { return new(router.ValidateV1Request) }},
	{"validate_v1_response.json", func() any { return new(router.ValidateV1Response) }},
	{"delegate_v2_request.json", func() any { return new(router.DelegateV2Request) }},
	{"delegate_v2_request_string_input.json", func() any { return new(router.DelegateV2Request) }},
	{"delegate_v2_request_array_input.json", func() any { return new(router.DelegateV2Request) }},
	{"delegate_v2_response.json", func() any { return new(router.DelegateV2Response) }},
	{"validate_v2_request.json", func() any { return new(router.ValidateV2Request) }},
	{"validate_v2_response.json", func() any { return new(router.ValidateV2Response) }},
	{"delegate_v3_request.json", func() any { return new(router.DelegateV3Request) }},
	{"delegate_v3_response.json", func() any { return new(router.DelegateV3Response) }},
	{"validate_v3_request.json", func() any { return new(router.ValidateV3Request) }},
	{"validate_v3_response.json", func() any { return new(router.ValidateV3Response) }},
	{"factcheck_request.json", func() any { return new(router.FactcheckRequest) }},
	{"factcheck_response.json", func() any { return new(router.FactcheckResponse) }},
	{"factcheck_v1_request.json", func() any { return new(router.FactcheckV1Request) }},
	{"about.json", func() any { return new(router.About) }},
	{"status.json", func() any { return new(router.Status) }},
	{"consensus_request.json", func() any { return new(router.ConsensusRequest) }},
	{"consensus_response.json", func() any { return new(router.ConsensusResponse) }},
	{"job.json", func() any { return new(router.Job) }},
	{"result.json", func() any { return new(router.Result) }},
}

// TestRoundTrip decodes each example, validates it when it is a request,
// encodes it and decodes the encoding again: the two values must be equal,
// and the encoding must keep every member of the example under its name.
func TestRoundTrip(t *testing.T) {
	for _, tc := range wireFiles {
		t.Run(tc.file, func(t *testing.T) {
			data := readTestdata(t, tc.file)
			first := tc.new()
			if err := jsonbody.Decode(bytes.NewReader(data), 0, first); err != nil {
				t.Fatalf("decoding the example: %v", err)
			}
			if v, ok := first.(validator); ok {
				if err := v.Validate(); err != nil {
					t.Fatalf("the example does not validate: %v", err)
				}
			}
			enc, err := json.Marshal(first)
			if err != nil {
				t.Fatalf("encoding: %v", err)
			}
			second := tc.new()
			if err := jsonbody.Unmarshal(enc, second); err != nil {
				t.Fatalf("decoding the re-encoding %s: %v", enc, err)
			}
			if v, ok := second.(validator); ok {
				if err := v.Validate(); err != nil {
					t.Fatalf("the re-encoding does not validate: %v", err)
				}
			}
			if diff := cmp.Diff(first, second, wireOpts); diff != "" {
				t.Errorf("decode(encode(v)) differs from v (-first +second):\n%s", diff)
			}
			if diff := cmp.Diff(memberPaths(t, data), memberPaths(t, enc)); diff != "" {
				t.Errorf("re-encoding lost or renamed members (-example +encoded):\n%s\nencoded: %s", diff, enc)
			}
		})
	}
}

// memberPaths lists the paths of every object member in a JSON document,
// array elements written as [], without repeats.
func memberPaths(t *testing.T, data []byte) []string {
	t.Helper()
	v, err := decodeAny(data)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, m := range v {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				seen[p] = true
				walk(p, m)
			}
		case []any:
			for _, e := range v {
				walk(prefix+"[]", e)
			}
		}
	}
	walk("", v)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func mustInput(t *testing.T, raw string) router.Input {
	t.Helper()
	var in router.Input
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		t.Fatalf("input %s: %v", raw, err)
	}
	return in
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// TestDecode_examples pins what each request example decodes to, field by
// field, as the spec's tables name them. Numbers in free-form maps stay
// json.Number, since jsonbody decodes with UseNumber.
func TestDecode_examples(t *testing.T) {
	pool := []router.SessionID{201, 202, 203}
	tests := []struct {
		file string
		got  any
		want any
	}{
		{"delegate_v1_request.json", new(router.DelegateV1Request), &router.DelegateV1Request{
			SessionID:        18,
			TaskRequestInput: "Summarize the attached quarterly report in three sentences.",
			TaskDomain:       "finance",
			TaskType:         "summarization",
			EvaluationMode:   "high_reliability",
			WebURL:           "https://example.com/reports/q3.html",
		}},
		{"validate_v1_request.json", new(router.ValidateV1Request), &router.ValidateV1Request{
			SessionID:          19,
			TaskRequestInput:   "Summarize the attached quarterly report in three sentences.",
			TaskResultOutput:   "Revenue rose 12%. Costs were flat. Guidance was raised.",
			TaskDomain:         "finance",
			TaskType:           "summarization",
			AcceptanceCriteria: []string{"accuracy", "conciseness", "non_hallucination"},
			EvaluationMode:     "llm_judge",
		}},
		{"delegate_v2_request.json", new(router.DelegateV2Request), &router.DelegateV2Request{
			SessionID: 18,
			DelegateTask: router.DelegateTask{
				Objective: "Extract the invoice total and due date",
				Input:     mustInput(t, `{"text": "Invoice 42: total 1,250.00 EUR, due 2026-12-01", "lang": "en"}`),
				Execution: router.Execution{Mode: router.ExecutionTools, Model: "auto", Tools: []string{"web_search", "calculator"}, MaxSteps: 3},
				Policy:    router.Policy{Tier: router.TierSafe, TimeoutMS: 60000},
				Tools:     raw(`[{"name":"calculator","description":"evaluates arithmetic"}]`),
				Workflow:  raw(`{"steps":["read","extract","check"]}`),
				Metadata:  map[string]any{"client_ref": "abc", "attempt": json.Number("1")},
			},
		}},
		{"delegate_v2_request_string_input.json", new(router.DelegateV2Request), &router.DelegateV2Request{
			SessionID: 18,
			DelegateTask: router.DelegateTask{
				Objective: "Translate to French",
				Input:     router.NewStringInput("Good morning, <team> & friends"),
				Execution: router.Execution{Mode: router.ExecutionSimple, Model: "gpt-small"},
				Policy:    router.Policy{Tier: router.TierFast, TimeoutMS: 5000, Redundancy: 1, Rules: []string{"no_pii"}},
			},
		}},
		{"delegate_v2_request_array_input.json", new(router.DelegateV2Request), &router.DelegateV2Request{
			SessionID: 18,
			DelegateTask: router.DelegateTask{
				Objective: "Classify each review as positive or negative",
				Input:     mustInput(t, `{"kind":"array","items":["great product",{"text":"broke in a day","stars":1},3.50]}`),
				Execution: router.Execution{Mode: router.ExecutionChain, MaxSteps: 10},
				Policy:    router.Policy{Tier: router.TierBalanced},
			},
		}},
		{"validate_v2_request.json", new(router.ValidateV2Request), &router.ValidateV2Request{
			SessionID: 19,
			ValidateTask: router.ValidateTask{
				RequestID: "req-2026-0001",
				Claim: router.Claim{
					Type:        "json_tool_call",
					Description: "Call get_weather for Paris",
					Output:      raw(`{"tool":"get_weather","arguments":{"city":"Paris"}}`),
					InputHash:   "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				},
				Policy:   router.ValidatePolicy{Tier: router.TierSafe, Redundancy: 1, Rules: []string{"consistency", "non-hallucination"}, TimeoutMS: 30000},
				Context:  map[string]any{"app": "travel-agent", "user_locale": "fr-FR"},
				Actor:    raw(`{"agent_id":"agent-7"}`),
				Metadata: map[string]any{"job_id": "job-55"},
			},
		}},
		{"delegate_v3_request.json", new(router.DelegateV3Request), &router.DelegateV3Request{
			DelegateTask: router.DelegateTask{
				Objective: "Answer the customer's refund question",
				Input:     mustInput(t, `{"question":"Can I return an opened item?","policy_doc":"returns.md"}`),
				Execution: router.Execution{Mode: router.ExecutionSimple, Model: "auto", MaxSteps: 2},
				Policy:    router.Policy{Tier: router.TierOracle, TimeoutMS: 120000, Redundancy: 3},
			},
			Consensus: router.ConsensusRequest{Replicas: 3, SessionPool: pool, Aggregation: router.AggregationMajority, DisagreementPolicy: router.DisagreeBestEffort},
		}},
		{"validate_v3_request.json", new(router.ValidateV3Request), &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{
				RequestID: "req-2026-0002",
				Claim: router.Claim{
					Type:        "trade_decision",
					Description: "Buy 10 ACME at market",
					Output:      raw(`{"action":"buy","symbol":"ACME","quantity":10}`),
					InputHash:   "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
				},
				Policy:  router.ValidatePolicy{Tier: router.TierSafe, Redundancy: 3, Rules: []string{"consistency"}},
				Context: map[string]any{"market": "paper", "risk_limit": json.Number("1000")},
			},
			Consensus: router.ConsensusRequest{Replicas: 3, SessionPool: pool, Aggregation: router.AggregationMajority, DisagreementPolicy: router.DisagreeReturnAll},
		}},
		{"factcheck_request.json", new(router.FactcheckRequest), &router.FactcheckRequest{
			SessionID: 25,
			RequestID: "fc-001",
			Claim:     "The Eiffel Tower is in Paris.",
			Mode:      router.FactcheckRealtime,
			Context:   map[string]any{"source": "user message"},
			Policy:    router.ValidatePolicy{Tier: router.TierOracle, Redundancy: 5, Rules: []string{"cite_sources"}, TimeoutMS: 45000},
			Consensus: router.ConsensusRequest{Replicas: 5, SessionPool: []router.SessionID{201, 202, 203, 204, 205}, Aggregation: router.AggregationMajority, DisagreementPolicy: router.DisagreeFailHard},
		}},
		{"factcheck_v1_request.json", new(router.FactcheckV1Request), &router.FactcheckV1Request{
			RequestID:   "fc1-001",
			Claim:       "The Eiffel Tower is in Paris.",
			Mode:        router.FactcheckStandard,
			Context:     map[string]any{"source": "user message"},
			Policy:      router.ValidatePolicy{Tier: router.TierSafe, Redundancy: 3, Rules: []string{"cite_sources"}, TimeoutMS: 45000},
			SessionPool: []router.SessionID{20, 25, 26},
		}},
		{"status.json", new(router.Status), &router.Status{
			Sessions: []router.SessionStatus{
				{ID: 1, Pool: "a", Tiers: []router.Tier{router.TierFast, router.TierSafe}, Health: router.HealthHealthy},
				{ID: 2, Pool: "b", Health: router.HealthCoolingDown, Failures: 3, CoolingUntil: time.Date(2026, 7, 1, 12, 0, 30, 0, time.UTC)},
				{ID: 3, Health: router.HealthHalfOpen, Failures: 3},
			},
			Calls: map[string]int64{"GET /api/v1/ping": 12, "POST /api/v1/factcheck": 3, "POST /api/v1/fact-check": 1},
		}},
		{"consensus_response.json", new(router.ConsensusResponse), &router.ConsensusResponse{
			Replicas: 3, Agreement: 0.67, Verdicts: []router.Label{"VALID", "VALID", "INVALID"}, Strategy: router.AggregationMajority, Confidence: 0.8,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			if err := jsonbody.Unmarshal(readTestdata(t, tc.file), tc.got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tc.got, wireOpts); diff != "" {
				t.Errorf("decoded value (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSessionPool_encodesIntegers checks that the documented string form of
// a session pool is written back as the integers the spec shows.
func TestSessionPool_encodesIntegers(t *testing.T) {
	var c router.ConsensusRequest
	if err := jsonbody.Unmarshal([]byte(`{"replicas":3,"session_pool":["201","202","203"]}`), &c); err != nil {
		t.Fatal(err)
	}
	enc, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"replicas":3,"session_pool":[201,202,203]}`; string(enc) != want {
		t.Errorf("encoded %s, want %s", enc, want)
	}
	for i, id := range c.SessionPool {
		if got, want := id.String(), strconv.Itoa(201+i); got != want {
			t.Errorf("SessionPool[%d].String() = %q, want %q", i, got, want)
		}
	}
}
