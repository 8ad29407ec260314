package router_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// TestValidate_invalid changes one member of a valid example and expects
// exactly the listed field errors, each naming the JSON path and the rule.
func TestValidate_invalid(t *testing.T) {
	const (
		dv1 = "delegate_v1_request.json"
		vv1 = "validate_v1_request.json"
		dv2 = "delegate_v2_request.json"
		vv2 = "validate_v2_request.json"
		dv3 = "delegate_v3_request.json"
		vv3 = "validate_v3_request.json"
		fc  = "factcheck_request.json"
		fc1 = "factcheck_v1_request.json"
	)
	newReq := map[string]func() validator{
		dv1: func() validator { return new(router.DelegateV1Request) },
		vv1: func() validator { return new(router.ValidateV1Request) },
		dv2: func() validator { return new(router.DelegateV2Request) },
		vv2: func() validator { return new(router.ValidateV2Request) },
		dv3: func() validator { return new(router.DelegateV3Request) },
		vv3: func() validator { return new(router.ValidateV3Request) },
		fc:  func() validator { return new(router.FactcheckRequest) },
		fc1: func() validator { return new(router.FactcheckV1Request) },
	}
	tests := []struct {
		name  string
		file  string
		path  string // member to change
		value string // its new raw JSON value, or "" to remove it
		want  []fieldRule
		// message, if set, must occur in the message of the first error.
		message string
	}{
		// consensus
		{"replicas 2", vv3, "consensus.replicas", `2`, []fieldRule{{"consensus.replicas", "oneof"}}, "must be one of 1, 3, 5"},
		{"replicas 4", dv3, "consensus.replicas", `4`, []fieldRule{{"consensus.replicas", "oneof"}}, ""},
		{"replicas -1", fc, "consensus.replicas", `-1`, []fieldRule{{"consensus.replicas", "oneof"}}, ""},
		// 0 cannot be told from a missing member: the rule is required.
		{"replicas 0", vv3, "consensus.replicas", `0`, []fieldRule{{"consensus.replicas", "oneof"}}, ""},
		{"replicas missing", dv3, "consensus.replicas", ``, []fieldRule{{"consensus.replicas", "oneof"}}, ""},
		{"consensus missing", fc, "consensus", ``, []fieldRule{{"consensus.replicas", "oneof"}}, ""},
		{"weight_by stake", vv3, "consensus", `{"replicas": 3, "aggregation": "weighted", "weight_by": "stake"}`, []fieldRule{{"consensus.weight_by", "weight_by"}}, `"stake" is named by the interface but not available; use "reputation"`},
		{"weight_by latency", dv3, "consensus", `{"replicas": 3, "aggregation": "weighted", "weight_by": "latency"}`, []fieldRule{{"consensus.weight_by", "weight_by"}}, "not available"},
		{"weight_by cost", fc, "consensus", `{"replicas": 3, "aggregation": "weighted", "weight_by": "cost"}`, []fieldRule{{"consensus.weight_by", "weight_by"}}, "not available"},
		{"weight_by foo", vv3, "consensus", `{"replicas": 3, "aggregation": "weighted", "weight_by": "foo"}`, []fieldRule{{"consensus.weight_by", "weight_by"}}, `must be "reputation", got "foo"`},
		{"weight_by without weighted", vv3, "consensus", `{"replicas": 3, "weight_by": "reputation"}`, []fieldRule{{"consensus.weight_by", "weighted_only"}}, `applies only to consensus.aggregation "weighted"`},
		{"aggregation median on validate", vv3, "consensus.aggregation", `"median"`, []fieldRule{{"consensus.aggregation", "delegate_only"}}, `"median" aggregates the numbers delegations answer`},
		{"aggregation median_of_means on factcheck", fc, "consensus.aggregation", `"median_of_means"`, []fieldRule{{"consensus.aggregation", "delegate_only"}}, "votes verdicts"},
		{"tolerance with majority", dv3, "consensus", `{"replicas": 3, "tolerance": {"absolute": 1}}`, []fieldRule{{"consensus.tolerance", "numeric_only"}}, `applies only to consensus.aggregation "median" or "median_of_means"`},
		{"tolerance with weighted", dv3, "consensus", `{"replicas": 3, "aggregation": "weighted", "tolerance": {}}`, []fieldRule{{"consensus.tolerance", "numeric_only"}}, ""},
		{"tolerance negative", dv3, "consensus", `{"replicas": 3, "aggregation": "median", "tolerance": {"relative": -0.1}}`, []fieldRule{{"consensus.tolerance.relative", "gte"}}, ""},
		{"weight_by with median_of_means", dv3, "consensus", `{"replicas": 3, "aggregation": "median_of_means", "weight_by": "reputation"}`, []fieldRule{{"consensus.weight_by", "weighted_only"}}, ""},
		{"aggregation model_ensemble", vv3, "consensus.aggregation", `"model_ensemble"`, []fieldRule{{"consensus.aggregation", "aggregation"}}, "not yet available"},
		{"aggregation foo", vv3, "consensus.aggregation", `"foo"`, []fieldRule{{"consensus.aggregation", "aggregation"}}, `must be "majority", "weighted", "median" or "median_of_means", got "foo"`},
		{"aggregation upper case", vv3, "consensus.aggregation", `"MAJORITY"`, []fieldRule{{"consensus.aggregation", "aggregation"}}, ""},
		{"disagreement_policy", vv3, "consensus.disagreement_policy", `"ignore"`, []fieldRule{{"consensus.disagreement_policy", "oneof"}}, "return_all, fail_hard, best_effort"},
		{"session_pool repeats", vv3, "consensus.session_pool", `["201", 202, "201"]`, []fieldRule{{"consensus.session_pool", "unique"}}, ""},
		{"session_pool 0", dv3, "consensus.session_pool", `[0, 202, 203]`, []fieldRule{{"consensus.session_pool[0]", "gt"}}, ""},
		{"session_pool negative", fc, "consensus.session_pool", `["201", "-5"]`, []fieldRule{{"consensus.session_pool[1]", "gt"}}, ""},
		{"factcheck v1 session_pool repeats", fc1, "session_pool", `[20, "20"]`, []fieldRule{{"session_pool", "unique"}}, ""},
		{"factcheck v1 session_pool 0", fc1, "session_pool", `["20", "0"]`, []fieldRule{{"session_pool[1]", "gt"}}, ""},

		// policy
		{"tier adaptive v2", dv2, "policy.tier", `"adaptive"`, []fieldRule{{"policy.tier", "tier"}}, "trust-service tier"},
		{"tier adaptive v3", vv3, "policy.tier", `"adaptive"`, []fieldRule{{"policy.tier", "tier"}}, "trust-service tier"},
		{"tier turbo", vv2, "policy.tier", `"turbo"`, []fieldRule{{"policy.tier", "tier"}}, `got "turbo"`},
		{"tier turbo factcheck", fc, "policy.tier", `"turbo"`, []fieldRule{{"policy.tier", "tier"}}, ""},
		{"redundancy 5 in delegate v2", dv2, "policy.redundancy", `5`, []fieldRule{{"policy.redundancy", "single_session"}}, "version 3"},
		// One mistake gives one error: a count outside 1, 3, 5 is not also
		// compared with consensus.replicas, nor called single-session.
		{"redundancy 2 in v3", vv3, "policy.redundancy", `2`, []fieldRule{{"policy.redundancy", "oneof"}}, ""},
		{"redundancy 2 in v2", vv2, "policy.redundancy", `2`, []fieldRule{{"policy.redundancy", "oneof"}}, ""},
		{"redundancy 4 in v2", dv2, "policy.redundancy", `4`, []fieldRule{{"policy.redundancy", "oneof"}}, ""},
		{"factcheck v1 redundancy 1", fc1, "policy.redundancy", `1`, []fieldRule{{"policy.redundancy", "min_redundancy"}}, "at least 3 replicas"},
		{"factcheck v1 redundancy 4", fc1, "policy.redundancy", `4`, []fieldRule{{"policy.redundancy", "oneof"}}, ""},
		{"factcheck v1 tier adaptive", fc1, "policy.tier", `"adaptive"`, []fieldRule{{"policy.tier", "tier"}}, "trust-service tier"},
		{"factcheck v1 timeout_ms over an hour", fc1, "policy.timeout_ms", `3600001`, []fieldRule{{"policy.timeout_ms", "lte"}}, ""},
		{"timeout_ms -5", dv2, "policy.timeout_ms", `-5`, []fieldRule{{"policy.timeout_ms", "gt"}}, ""},
		{"timeout_ms over an hour", dv3, "policy.timeout_ms", `3600001`, []fieldRule{{"policy.timeout_ms", "lte"}}, "at most 3600000"},
		{"validate timeout_ms -5", vv2, "policy.timeout_ms", `-5`, []fieldRule{{"policy.timeout_ms", "gt"}}, ""},
		{"validate timeout_ms over an hour", fc, "policy.timeout_ms", `3600001`, []fieldRule{{"policy.timeout_ms", "lte"}}, ""},
		{"empty rule", vv3, "policy.rules", `["consistency", ""]`, []fieldRule{{"policy.rules[1]", "required"}}, ""},
		{"blank rule", vv2, "policy.rules", `["consistency", " "]`, []fieldRule{{"policy.rules[1]", "text"}}, "must hold text"},
		{"blank delegate rule", dv3, "policy.rules", `["\t"]`, []fieldRule{{"policy.rules[0]", "text"}}, "must hold text"},

		// execution
		{"execution.mode", dv2, "execution.mode", `"parallel"`, []fieldRule{{"execution.mode", "oneof"}}, "tools, simple, chain"},
		{"max_steps -1", dv2, "execution.max_steps", `-1`, []fieldRule{{"execution.max_steps", "gt"}}, ""},
		{"max_steps 10001", dv3, "execution.max_steps", `10001`, []fieldRule{{"execution.max_steps", "lte"}}, ""},
		{"empty tool name", dv2, "execution.tools", `["calculator", ""]`, []fieldRule{{"execution.tools[1]", "required"}}, ""},
		{"blank tool name", dv2, "execution.tools", `["calculator", "  "]`, []fieldRule{{"execution.tools[1]", "text"}}, "must hold text"},

		// claim
		{"claim.output missing", vv2, "claim.output", ``, []fieldRule{{"claim.output", "present"}}, "must not be null"},
		{"claim.output null", vv3, "claim.output", `null`, []fieldRule{{"claim.output", "present"}}, ""},
		{"claim.type missing", vv2, "claim.type", ``, []fieldRule{{"claim.type", "required"}}, ""},
		{"claim.type empty", vv3, "claim.type", `""`, []fieldRule{{"claim.type", "required"}}, ""},
		{"claim missing", vv3, "claim", ``, []fieldRule{{"claim.output", "present"}, {"claim.type", "required"}}, ""},
		{"factcheck claim missing", fc, "claim", ``, []fieldRule{{"claim", "required"}}, ""},
		{"factcheck mode", fc, "mode", `"fast"`, []fieldRule{{"mode", "oneof"}}, ""},
		{"factcheck v1 claim empty", fc1, "claim", `""`, []fieldRule{{"claim", "required"}}, ""},
		{"factcheck v1 mode", fc1, "mode", `"Realtime"`, []fieldRule{{"mode", "oneof"}}, ""},
		{"factcheck v1 session_id -1", fc1, "session_id", `"-1"`, []fieldRule{{"session_id", "gt"}}, ""},

		// session_id
		{"v1 session_id missing", dv1, "session_id", ``, []fieldRule{{"session_id", "required"}}, ""},
		{"v1 session_id 0", vv1, "session_id", `0`, []fieldRule{{"session_id", "required"}}, ""},
		{"v2 session_id missing", dv2, "session_id", ``, []fieldRule{{"session_id", "required"}}, ""},
		{"v2 session_id 0", vv2, "session_id", `"0"`, []fieldRule{{"session_id", "required"}}, ""},
		{"v3 session_id -1", dv3, "session_id", `-1`, []fieldRule{{"session_id", "gt"}}, ""},

		// version 1 and 2 text members
		{"objective missing", dv2, "objective", ``, []fieldRule{{"objective", "required"}}, ""},
		{"objective empty", dv3, "objective", `""`, []fieldRule{{"objective", "required"}}, ""},
		{"task_request_input missing", dv1, "task_request_input", ``, []fieldRule{{"task_request_input", "required"}}, ""},
		{"validate task_request_input empty", vv1, "task_request_input", `""`, []fieldRule{{"task_request_input", "required"}}, ""},
		{"task_result_output missing", vv1, "task_result_output", ``, []fieldRule{{"task_result_output", "required"}}, ""},
		{"web_url not a URL", dv1, "web_url", `"not a url"`, []fieldRule{{"web_url", "http_url"}}, `got "not a url"`},
		{"web_url relative", dv1, "web_url", `"/reports/q3.html"`, []fieldRule{{"web_url", "http_url"}}, ""},
		{"web_url ftp", dv1, "web_url", `"ftp://example.com/q3"`, []fieldRule{{"web_url", "http_url"}}, ""},
		{"acceptance_criteria empty string", vv1, "acceptance_criteria", `["accuracy", "", "conciseness"]`, []fieldRule{{"acceptance_criteria[1]", "required"}}, ""},
		{"acceptance_criteria blank", vv1, "acceptance_criteria", `["accuracy", "\n"]`, []fieldRule{{"acceptance_criteria[1]", "text"}}, "must hold text"},
		{"request_id too long", vv2, "request_id", `"` + strings.Repeat("r", 201) + `"`, []fieldRule{{"request_id", "max"}}, ""},
		{"factcheck request_id too long", fc, "request_id", `"` + strings.Repeat("r", 201) + `"`, []fieldRule{{"request_id", "max"}}, ""},
		{"request_id blank", vv3, "request_id", `" "`, []fieldRule{{"request_id", "text"}}, "must hold text"},
		{"factcheck request_id blank", fc, "request_id", `"\t"`, []fieldRule{{"request_id", "text"}}, "must hold text"},
		{"factcheck v1 request_id blank", fc1, "request_id", `"  "`, []fieldRule{{"request_id", "text"}}, "must hold text"},

		// several at once: every failure is listed
		{"two failures", vv3, "consensus", `{"replicas": 2, "aggregation": "median"}`, []fieldRule{{"consensus.aggregation", "delegate_only"}, {"consensus.replicas", "oneof"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := newReq[tc.file]()
			if err := jsonbody.Unmarshal(patch(t, tc.file, tc.path, tc.value), req); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			err := req.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want %v", tc.want)
			}
			if diff := cmp.Diff(tc.want, fieldRules(t, err)); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
			p := asProblem(t, err)
			if tc.message != "" && !strings.Contains(p.Errors[0].Message, tc.message) {
				t.Errorf("message %q does not contain %q", p.Errors[0].Message, tc.message)
			}
			for _, fe := range p.Errors {
				if !strings.Contains(p.Detail, fe.Field+": "+fe.Message) {
					t.Errorf("detail %q does not name %s", p.Detail, fe.Field)
				}
			}
			var rerr *router.Error
			if !errors.As(err, &rerr) {
				t.Errorf("errors.As(%v, *router.Error) = false", err)
			} else if rerr.Type != problem.TypePrefix+string(problem.CodeInvalidRequest) {
				t.Errorf("type %q, want %q", rerr.Type, problem.TypePrefix+string(problem.CodeInvalidRequest))
			}
		})
	}
}

// TestValidate_limits checks the edges of the numeric bounds: the largest
// allowed values pass.
func TestValidate_limits(t *testing.T) {
	tests := []struct {
		file, path, value string
		req               validator
	}{
		{"delegate_v2_request.json", "execution.max_steps", `10000`, new(router.DelegateV2Request)},
		{"delegate_v2_request.json", "execution.max_steps", `1`, new(router.DelegateV2Request)},
		{"delegate_v3_request.json", "policy.timeout_ms", `3600000`, new(router.DelegateV3Request)},
		{"delegate_v2_request.json", "policy.timeout_ms", `1`, new(router.DelegateV2Request)},
		{"validate_v2_request.json", "request_id", `"` + strings.Repeat("r", 200) + `"`, new(router.ValidateV2Request)},
		{"validate_v3_request.json", "policy.redundancy", ``, new(router.ValidateV3Request)},
		{"validate_v3_request.json", "consensus.session_pool", `[]`, new(router.ValidateV3Request)},
		{"validate_v3_request.json", "consensus.aggregation", ``, new(router.ValidateV3Request)},
		{"validate_v3_request.json", "consensus.disagreement_policy", ``, new(router.ValidateV3Request)},
		{"validate_v3_request.json", "session_id", `0`, new(router.ValidateV3Request)},
		{"validate_v2_request.json", "claim.output", `false`, new(router.ValidateV2Request)},
		{"validate_v2_request.json", "claim.output", `""`, new(router.ValidateV2Request)},
		{"validate_v2_request.json", "claim.output", `0`, new(router.ValidateV2Request)},
		{"delegate_v1_request.json", "web_url", `"http://localhost:8080/x?y=1"`, new(router.DelegateV1Request)},
		{"validate_v1_request.json", "acceptance_criteria", `[]`, new(router.ValidateV1Request)},
		{"factcheck_request.json", "mode", `"standard"`, new(router.FactcheckRequest)},
		{"factcheck_v1_request.json", "policy", ``, new(router.FactcheckV1Request)},
		{"factcheck_v1_request.json", "policy.redundancy", `5`, new(router.FactcheckV1Request)},
		{"factcheck_v1_request.json", "mode", `"realtime"`, new(router.FactcheckV1Request)},
		{"factcheck_v1_request.json", "session_pool", `[]`, new(router.FactcheckV1Request)},
		{"factcheck_v1_request.json", "session_id", `"7"`, new(router.FactcheckV1Request)},
	}
	for _, tc := range tests {
		if err := jsonbody.Unmarshal(patch(t, tc.file, tc.path, tc.value), tc.req); err != nil {
			t.Fatalf("%s %s=%s: decoding: %v", tc.file, tc.path, tc.value, err)
		}
		if err := tc.req.Validate(); err != nil {
			t.Errorf("%s %s=%s: %v, want valid", tc.file, tc.path, tc.value, err)
		}
	}
}

// TestValidate_empty checks that an empty object lists every required
// member of each request type.
func TestValidate_empty(t *testing.T) {
	tests := []struct {
		req  validator
		want []fieldRule
	}{
		{new(router.DelegateV1Request), []fieldRule{{"session_id", "required"}, {"task_request_input", "required"}}},
		{new(router.ValidateV1Request), []fieldRule{{"session_id", "required"}, {"task_request_input", "required"}, {"task_result_output", "required"}}},
		{new(router.DelegateV2Request), []fieldRule{{"objective", "required"}, {"session_id", "required"}}},
		{new(router.ValidateV2Request), []fieldRule{{"claim.output", "present"}, {"claim.type", "required"}, {"session_id", "required"}}},
		{new(router.DelegateV3Request), []fieldRule{{"consensus.replicas", "oneof"}, {"objective", "required"}}},
		{new(router.ValidateV3Request), []fieldRule{{"claim.output", "present"}, {"claim.type", "required"}, {"consensus.replicas", "oneof"}}},
		{new(router.FactcheckRequest), []fieldRule{{"claim", "required"}, {"consensus.replicas", "oneof"}}},
		{new(router.FactcheckV1Request), []fieldRule{{"claim", "required"}}},
	}
	for _, tc := range tests {
		if err := jsonbody.Unmarshal([]byte(`{}`), tc.req); err != nil {
			t.Fatal(err)
		}
		err := tc.req.Validate()
		if err == nil {
			t.Errorf("%T: Validate() = nil", tc.req)
			continue
		}
		if diff := cmp.Diff(tc.want, fieldRules(t, err)); diff != "" {
			t.Errorf("%T: field errors (-want +got):\n%s", tc.req, diff)
		}
	}
}

// TestDecode_typeErrors checks that a member of the wrong JSON type is
// reported by its JSON path, including members of the embedded task
// structs, whose Go names must not leak into the path.
func TestDecode_typeErrors(t *testing.T) {
	tests := []struct {
		file, path, value string
		req               any
		want              string
	}{
		{"delegate_v2_request.json", "objective", `42`, new(router.DelegateV2Request), "objective"},
		{"delegate_v2_request.json", "execution.max_steps", `"3"`, new(router.DelegateV2Request), "execution.max_steps"},
		{"delegate_v2_request.json", "execution.max_steps", `2.5`, new(router.DelegateV2Request), "execution.max_steps"},
		{"delegate_v3_request.json", "policy.timeout_ms", `"1s"`, new(router.DelegateV3Request), "policy.timeout_ms"},
		{"delegate_v3_request.json", "execution.tools", `"search"`, new(router.DelegateV3Request), "execution.tools"},
		{"validate_v2_request.json", "claim.type", `["summary"]`, new(router.ValidateV2Request), "claim.type"},
		{"validate_v3_request.json", "consensus.replicas", `"3"`, new(router.ValidateV3Request), "consensus.replicas"},
		{"validate_v3_request.json", "consensus.replicas", `3.0`, new(router.ValidateV3Request), "consensus.replicas"},
		{"validate_v3_request.json", "context", `"ctx"`, new(router.ValidateV3Request), "context"},
		{"validate_v3_request.json", "policy.rules", `"consistency"`, new(router.ValidateV3Request), "policy.rules"},
		{"factcheck_request.json", "claim", `{"text": "x"}`, new(router.FactcheckRequest), "claim"},
		{"factcheck_request.json", "consensus", `[3]`, new(router.FactcheckRequest), "consensus"},
		{"validate_v1_request.json", "acceptance_criteria", `[1]`, new(router.ValidateV1Request), "acceptance_criteria[0]"},
	}
	for _, tc := range tests {
		err := jsonbody.Unmarshal(patch(t, tc.file, tc.path, tc.value), tc.req)
		if err == nil {
			t.Errorf("%s %s=%s: no error", tc.file, tc.path, tc.value)
			continue
		}
		if diff := cmp.Diff([]fieldRule{{tc.want, "type"}}, fieldRules(t, err)); diff != "" {
			t.Errorf("%s %s=%s (-want +got):\n%s", tc.file, tc.path, tc.value, diff)
		}
	}
}

// TestDecode_malformed sends bodies that are not one JSON object through
// jsonbody.Decode into a request type.
func TestDecode_malformed(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		limit  int64
		status int
		code   problem.Code
		detail string // must occur in the detail
	}{
		// Offsets count from 0: the second comma is at index 16.
		{"syntax error", `{"session_id":1,,"claim":"c"}`, 0, 400, problem.CodeMalformedJSON, "byte offset 16"},
		// The } at index 13 ends the literal too early.
		{"bad literal", `{"claim": tru}`, 0, 400, problem.CodeMalformedJSON, "byte offset 13"},
		{"truncated", `{"claim": "c", "consensus": {"replicas": 3`, 0, 400, problem.CodeMalformedJSON, "ends before the value"},
		{"trailing object", `{"claim":"c"} {"claim":"d"}`, 0, 400, problem.CodeMalformedJSON, "byte offset 14"},
		{"trailing garbage", `{"claim":"c"}x`, 0, 400, problem.CodeMalformedJSON, "byte offset 13"},
		{"empty", ``, 0, 400, problem.CodeMalformedJSON, "empty"},
		{"blank", " \n\t ", 0, 400, problem.CodeMalformedJSON, "empty"},
		{"too large", `{"claim": "` + strings.Repeat("x", 100) + `"}`, 64, 413, problem.CodeBodyTooLarge, "64 bytes"},
		{"top-level array", `[{"claim":"c"}]`, 0, 400, problem.CodeInvalidRequest, "(body)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var req router.FactcheckRequest
			err := jsonbody.Decode(strings.NewReader(tc.body), tc.limit, &req)
			p := asProblem(t, err)
			if p.Status != tc.status || p.Code != tc.code {
				t.Errorf("problem %d %s, want %d %s (%s)", p.Status, p.Code, tc.status, tc.code, p.Detail)
			}
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q does not contain %q", p.Detail, tc.detail)
			}
		})
	}
}

// TestDecode_unknownMembersIgnored checks the forward-compatibility rule:
// members a version does not know are ignored, not rejected.
func TestDecode_unknownMembersIgnored(t *testing.T) {
	body := patch(t, "validate_v3_request.json", "receipt", `{"mode": "inline"}`)
	body = append(body[:len(body)-1], []byte(`,"consensus_v4":{"weight_by":"stake"}}`)...)
	var got, want router.ValidateV3Request
	if err := jsonbody.Decode(bytes.NewReader(body), 0, &got); err != nil {
		t.Fatal(err)
	}
	if err := jsonbody.Unmarshal(readTestdata(t, "validate_v3_request.json"), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, wireOpts); diff != "" {
		t.Errorf("unknown members changed the value (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}
