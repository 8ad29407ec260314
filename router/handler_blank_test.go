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
	} {
		c.status, c.code = 400, "invalid_request"
		sendBad(t, srv, c)
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("blank members ran %d jobs", n)
	}
}
