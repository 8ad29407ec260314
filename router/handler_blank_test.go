package router_test

import "testing"

// TestHandler_blankText sends each route a required text member of
// white space only over loopback: each answers 400 naming the member,
// as the trust call and the MCP tools refuse a blank input, objective or
// claim, and no worker runs on an empty prompt.
func TestHandler_blankText(t *testing.T) {
	srv, rec := newKeyedHandler(t)
	for _, c := range []badInputCase{
		{name: "v1 delegate", path: "/api/v1/delegate", body: `{"session_id":1,"task_request_input":"  "}`, field: "task_request_input"},
		{name: "v1 validate", path: "/api/v1/validate", body: `{"session_id":1,"task_request_input":"x","task_result_output":"\n"}`, field: "task_result_output"},
		{name: "v1 factcheck", path: "/api/v1/factcheck", body: `{"claim":" "}`, field: "claim"},
		{name: "v2 delegate", path: "/api/v2/delegate", body: `{"session_id":1,"objective":"\t","input":"y"}`, field: "objective"},
		{name: "v2 validate", path: "/api/v2/validate", body: `{"session_id":1,"claim":{"type":" ","output":"x"}}`, field: "claim.type"},
		{name: "v3 factcheck", path: "/api/v3/factcheck", body: `{"claim":" ","consensus":{"replicas":3}}`, field: "claim"},
		{name: "v1 validate criterion", path: "/api/v1/validate", body: `{"session_id":1,"task_request_input":"x","task_result_output":"y","acceptance_criteria":["accuracy"," "]}`, field: "acceptance_criteria[1]"},
		{name: "v2 delegate tool", path: "/api/v2/delegate", body: `{"session_id":1,"objective":"x","input":"y","execution":{"tools":["calculator","\t"]}}`, field: "execution.tools[1]"},
		{name: "v2 delegate rule", path: "/api/v2/delegate", body: `{"session_id":1,"objective":"x","input":"y","policy":{"rules":[" "]}}`, field: "policy.rules[0]"},
		{name: "v2 validate rule", path: "/api/v2/validate", body: `{"session_id":1,"claim":{"type":"summary","output":"x"},"policy":{"rules":["consistency","  "]}}`, field: "policy.rules[1]"},
		{name: "v3 validate rule", path: "/api/v3/validate", body: `{"claim":{"type":"summary","output":"x"},"policy":{"rules":["\n"]},"consensus":{"replicas":3}}`, field: "policy.rules[0]"},
		{name: "v1 factcheck request_id", path: "/api/v1/factcheck", body: `{"claim":"x","request_id":" "}`, field: "request_id"},
		{name: "v2 validate request_id", path: "/api/v2/validate", body: `{"session_id":1,"request_id":"\t","claim":{"type":"summary","output":"x"}}`, field: "request_id"},
		{name: "v3 validate request_id", path: "/api/v3/validate", body: `{"request_id":"  ","claim":{"type":"summary","output":"x"},"consensus":{"replicas":3}}`, field: "request_id"},
		{name: "v3 factcheck request_id", path: "/api/v3/factcheck", body: `{"claim":"x","request_id":"\n","consensus":{"replicas":3}}`, field: "request_id"},
		{name: "v3 delegate tool", path: "/api/v3/delegate", body: `{"objective":"x","input":"y","execution":{"tools":[" "]},"consensus":{"replicas":3}}`, field: "execution.tools[0]"},
	} {
		c.status, c.code = 400, "invalid_request"
		sendBad(t, srv, c)
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("blank members ran %d jobs", n)
	}
}
