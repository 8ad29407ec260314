package router_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHandler_topLevelSessionPool checks that a version 3 body with
// session_pool beside consensus, instead of inside it, is a 400 whose
// field error names consensus.session_pool, together with the body's
// other field errors; another unknown member, and a top-level
// session_pool in version 2, are refused as unknown. The detail says what
// the field errors say, each as "field: message".
func TestHandler_topLevelSessionPool(t *testing.T) {
	srv, _ := newKeyedHandler(t)
	misplaced := struct{ Field, Rule, Message string }{"session_pool", "misplaced", "belongs inside the consensus block: send it as consensus.session_pool"}
	tests := []struct {
		name, path, body string
		status           int
		want             []struct{ Field, Rule, Message string }
	}{
		{"validate", "/api/v3/validate", `{"claim":{"type":"t","output":"o"},"consensus":{"replicas":3},"session_pool":[1,2,3]}`,
			400, []struct{ Field, Rule, Message string }{misplaced}},
		{"delegate", "/api/v3/delegate", `{"objective":"o","input":"i","consensus":{"replicas":1},"session_pool":[1]}`,
			400, []struct{ Field, Rule, Message string }{misplaced}},
		{"factcheck", "/api/v3/factcheck", `{"claim":"c","consensus":{"replicas":3},"session_pool":[]}`,
			400, []struct{ Field, Rule, Message string }{misplaced}},
		{"with another error", "/api/v3/validate", `{"claim":{"type":"t","output":"o"},"consensus":{"replicas":2},"session_pool":[1]}`,
			400, []struct{ Field, Rule, Message string }{{"consensus.replicas", "oneof", "must be one of 1, 3, 5, got 2"}, misplaced}},
		{"inside consensus", "/api/v3/validate", `{"claim":{"type":"t","output":"o"},"consensus":{"replicas":3,"session_pool":[1,2,3]}}`, 200, nil},
		{"other unknown member", "/api/v3/validate", `{"claim":{"type":"t","output":"o"},"consensus":{"replicas":3},"sessions_pool":[1]}`,
			400, []struct{ Field, Rule, Message string }{{"sessions_pool", "unknown", ""}}},
		{"in the context", "/api/v3/validate", `{"claim":{"type":"t","output":"o"},"consensus":{"replicas":1},"context":{"session_pool":[1]}}`, 200, nil},
		{"version 2 refuses it as unknown", "/api/v2/validate", `{"session_id":1,"claim":{"type":"t","output":"o"},"session_pool":[1]}`,
			400, []struct{ Field, Rule, Message string }{{"session_pool", "unknown", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer k")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status != 400 {
				return
			}
			var p problemAnswer
			if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
				t.Fatal(err)
			}
			got := make([]struct{ Field, Rule, Message string }, len(p.Errors))
			copy(got, p.Errors)
			for i := range got { // an empty wanted message: any but none
				if i < len(tc.want) && tc.want[i].Message == "" && got[i].Message != "" {
					got[i].Message = ""
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
			parts := make([]string, len(p.Errors))
			for i, fe := range p.Errors {
				parts[i] = fe.Field + ": " + fe.Message
			}
			if diff := cmp.Diff(strings.Join(parts, "; "), p.Detail); diff != "" {
				t.Errorf("detail does not say what the field errors say (-errors +detail):\n%s", diff)
			}
		})
	}
}
