package router_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHandler_unknownMember sends each route a body with a misspelt
// member over loopback: each answers 400 naming the member by its JSON
// path, and none runs a job under the defaults the misspelling would
// have left in place.
func TestHandler_unknownMember(t *testing.T) {
	srv, rec := newKeyedHandler(t)

	claim := `"claim":{"type":"summary","output":"x"}`
	for _, c := range []badInputCase{
		{name: "v3 validate, misspelt disagreement policy", path: "/api/v3/validate",
			body: `{` + claim + `,"consensus":{"replicas":3,"disagreemnt_policy":"fail_hard"}}`, field: "consensus.disagreemnt_policy"},
		{name: "v3 delegate, misspelt disagreement policy", path: "/api/v3/delegate",
			body: `{"objective":"x","input":"y","consensus":{"replicas":3,"disagreemnt_policy":"fail_hard"}}`, field: "consensus.disagreemnt_policy"},
		{name: "v3 factcheck, misspelt disagreement policy", path: "/api/v3/factcheck",
			body: `{"claim":"x","consensus":{"replicas":3,"disagreemnt_policy":"fail_hard"}}`, field: "consensus.disagreemnt_policy"},
		{name: "v3 validate, misspelt top-level member", path: "/api/v3/validate",
			body: `{` + claim + `,"consensus":{"replicas":3},"polcy":{"tier":"oracle"}}`, field: "polcy"},
		{name: "v2 validate, misspelt policy member", path: "/api/v2/validate",
			body: `{"session_id":1,` + claim + `,"policy":{"tier":"safe","redundnacy":3}}`, field: "policy.redundnacy"},
		{name: "v2 delegate, misspelt execution member", path: "/api/v2/delegate",
			body: `{"session_id":1,"objective":"x","input":"y","execution":{"max_stpes":2}}`, field: "execution.max_stpes"},
		{name: "v1 validate, misspelt member", path: "/api/v1/validate",
			body: `{"session_id":1,"task_request_input":"x","task_result_output":"y","acceptance_critera":["accuracy"]}`, field: "acceptance_critera"},
		{name: "v1 delegate, misspelt member", path: "/api/v1/delegate",
			body: `{"session_id":1,"task_request_input":"x","evalution_mode":"high_reliability"}`, field: "evalution_mode"},
	} {
		c.status, c.code = 400, "invalid_request"
		sendBad(t, srv, c)
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("bodies with unknown members ran %d jobs", n)
	}

	// consensus.strategy is the public router's name for aggregation
	// (its clients send "majority"): accepted when it names the
	// aggregation vouch runs, refused when it would be ignored.
	sendBad(t, srv, badInputCase{name: "strategy that is not the aggregation", path: "/api/v3/validate",
		body:   `{` + claim + `,"consensus":{"replicas":3,"strategy":"weighted"}}`,
		status: 400, code: "invalid_request", field: "consensus.strategy"})
	for _, consensus := range []string{`{"replicas":3,"strategy":"majority"}`, `{"replicas":3,"strategy":"majority","aggregation":"majority"}`} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v3/validate", strings.NewReader(`{`+claim+`,"consensus":`+consensus+`}`))
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
		if resp.StatusCode != http.StatusOK {
			t.Errorf("consensus %s: status %d (%s), want 200", consensus, resp.StatusCode, raw)
		}
	}
}
