package router_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHandler_zerosAndEveryError checks over loopback that a member given
// "" or 0 where absence means the default is refused rather than read as
// absent, and that a body with several faults names each: every value of
// the wrong type, an array's element by its index, then the unknown
// members.
func TestHandler_zerosAndEveryError(t *testing.T) {
	srv, rec := newKeyedHandler(t)

	claim := `"claim":{"type":"summary","output":"x"}`
	type fieldRule struct{ Field, Rule string }
	for _, c := range []struct {
		path, body string
		want       []fieldRule
	}{
		{"/api/v2/delegate", `{"session_id":1,"objective":"x","execution":{"max_steps":0}}`, []fieldRule{{"execution.max_steps", "gt"}}},
		{"/api/v2/delegate", `{"session_id":1,"objective":"x","execution":{"mode":""},"policy":{"timeout_ms":0,"tier":""}}`,
			[]fieldRule{{"execution.mode", "oneof"}, {"policy.tier", "tier"}, {"policy.timeout_ms", "gt"}}},
		{"/api/v2/validate", `{"session_id":1,` + claim + `,"policy":{"redundancy":0}}`, []fieldRule{{"policy.redundancy", "oneof"}}},
		{"/api/v3/validate", `{` + claim + `,"consensus":{"replicas":3,"aggregation":"","disagreement_policy":""},"session_id":0}`,
			[]fieldRule{{"consensus.aggregation", "aggregation"}, {"consensus.disagreement_policy", "oneof"}, {"session_id", "gt"}}},
		{"/api/v3/validate", `{` + claim + `,"consensus":{"replicas":3,"strategy":""}}`, []fieldRule{{"consensus.strategy", "strategy"}}},
		{"/api/v3/validate", `{` + claim + `,"consensus":{"replicas":3},"session_id":"0"}`, []fieldRule{{"session_id", "gt"}}},
		{"/api/v3/validate", `{` + claim + `,"consensus":{"replicas":3},"session_id":"-0"}`, []fieldRule{{"session_id", "gt"}}},
		{"/api/v1/factcheck", `{"claim":"x","session_id":"-00"}`, []fieldRule{{"session_id", "gt"}}},
		{"/api/v1/factcheck", `{"claim":"x","mode":""}`, []fieldRule{{"mode", "oneof"}}},
		{"/api/v1/factcheck", `{"claim":"x","request_id":""}`, []fieldRule{{"request_id", "text"}}},
		{"/api/v3/factcheck", `{"claim":"x","request_id":"","consensus":{"replicas":3}}`, []fieldRule{{"request_id", "text"}}},
		{"/api/v2/validate", `{"session_id":1,` + claim + `,"request_id":""}`, []fieldRule{{"request_id", "text"}}},
		{"/api/v3/validate", `{` + claim + `,"request_id":"","consensus":{"replicas":3}}`, []fieldRule{{"request_id", "text"}}},
		{"/api/v1/validate", `{"session_id":"x","task_request_input":5,"task_result_output":[],"bogus":1}`,
			[]fieldRule{{"session_id", "type"}, {"task_request_input", "type"}, {"task_result_output", "type"}, {"bogus", "unknown"}}},
		{"/api/v3/validate", `{` + claim + `,"consensus":{"replicas":3,"session_pool":[1,2,3,"x"]},"policy":{"rules":["a",7]}}`,
			[]fieldRule{{"consensus.session_pool[3]", "type"}, {"policy.rules[1]", "type"}}},
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s %s: status %d (%s), want 400", c.path, c.body, resp.StatusCode, raw)
			continue
		}
		var p problemAnswer
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("%s: %s is not a problem: %v", c.path, raw, err)
		}
		var got []fieldRule
		for _, fe := range p.Errors {
			got = append(got, fieldRule{fe.Field, fe.Rule})
			if fe.Message == "" {
				t.Errorf("%s %s: %s has no message", c.path, c.body, fe.Field)
			}
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s %s: field errors (-want +got):\n%s", c.path, c.body, diff)
		}
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("refused requests reached a worker %d times", n)
	}
}
