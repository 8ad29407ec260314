package router_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/router"
)

// TestSessionID_forms checks that a JSON integer and a string of digits
// decode to the same id, which encodes as the integer.
func TestSessionID_forms(t *testing.T) {
	tests := []struct {
		in   string
		want router.SessionID
	}{
		{`201`, 201},
		{`"201"`, 201},
		{`"0201"`, 201},
		{`9223372036854775807`, 9223372036854775807},
		{`"9223372036854775807"`, 9223372036854775807},
		{`null`, 0},
	}
	for _, tc := range tests {
		var id router.SessionID
		if err := json.Unmarshal([]byte(tc.in), &id); err != nil {
			t.Errorf("decoding %s: %v", tc.in, err)
			continue
		}
		if id != tc.want {
			t.Errorf("decoding %s = %d, want %d", tc.in, id, tc.want)
		}
		enc, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		if want := tc.want.String(); string(enc) != want {
			t.Errorf("encoding %s = %s, want %s", tc.in, enc, want)
		}
	}
}

// TestSessionID_malformed checks each malformed session id in the three
// places ids appear: a required session_id, an optional v3 session_id, and
// a session pool. Ids that are not integers fail decoding (rule "type");
// integers that are not positive fail validation.
func TestSessionID_malformed(t *testing.T) {
	tests := []struct {
		id string
		// want is the failure at the top-level session_id of a v1 request.
		want fieldRule
		// wantV3 is the failure at the optional session_id of a v3 request;
		// zero means the id is accepted there (0 is "not set").
		wantV3 fieldRule
		// wantPool is the failure of the id as consensus.session_pool's
		// second element.
		wantPool fieldRule
	}{
		{`""`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`"abc"`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`"1.5"`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`1.5`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`1e3`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`"1e3"`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`"+1"`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`" 1"`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`"\u0031"`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`99999999999999999999`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`"99999999999999999999"`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`{}`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`[1]`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`true`, fieldRule{"session_id", "type"}, fieldRule{"session_id", "type"}, fieldRule{"consensus.session_pool[1]", "type"}},
		{`-1`, fieldRule{"session_id", "gt"}, fieldRule{"session_id", "gt"}, fieldRule{"consensus.session_pool[1]", "gt"}},
		{`"-1"`, fieldRule{"session_id", "gt"}, fieldRule{"session_id", "gt"}, fieldRule{"consensus.session_pool[1]", "gt"}},
		{`0`, fieldRule{"session_id", "required"}, fieldRule{}, fieldRule{"consensus.session_pool[1]", "gt"}},
		{`"0"`, fieldRule{"session_id", "required"}, fieldRule{}, fieldRule{"consensus.session_pool[1]", "gt"}},
		{`null`, fieldRule{"session_id", "required"}, fieldRule{}, fieldRule{"consensus.session_pool[1]", "gt"}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			check := func(what string, body []byte, v validator, want fieldRule) {
				t.Helper()
				err := jsonbody.Unmarshal(body, v)
				if err == nil {
					err = v.Validate()
				}
				if want == (fieldRule{}) {
					if err != nil {
						t.Errorf("%s: %v, want no error", what, err)
					}
					return
				}
				if err == nil {
					t.Errorf("%s: no error, want %v", what, want)
					return
				}
				if diff := cmp.Diff([]fieldRule{want}, fieldRules(t, err)); diff != "" {
					t.Errorf("%s: field errors (-want +got):\n%s", what, diff)
				}
			}
			check("delegate v1 session_id", patch(t, "delegate_v1_request.json", "session_id", tc.id), new(router.DelegateV1Request), tc.want)
			check("validate v2 session_id", patch(t, "validate_v2_request.json", "session_id", tc.id), new(router.ValidateV2Request), tc.want)
			check("validate v3 session_id", patch(t, "validate_v3_request.json", "session_id", tc.id), new(router.ValidateV3Request), tc.wantV3)
			check("session_pool element", patch(t, "validate_v3_request.json", "consensus.session_pool", `["201", `+tc.id+`, "203"]`), new(router.ValidateV3Request), tc.wantPool)
			// Factcheck v1 takes an optional session_id, as version 3
			// does, and its pool at the top.
			topPool := fieldRule{strings.TrimPrefix(tc.wantPool.Field, "consensus."), tc.wantPool.Rule}
			check("factcheck v1 session_id", patch(t, "factcheck_v1_request.json", "session_id", tc.id), new(router.FactcheckV1Request), tc.wantV3)
			check("factcheck v1 session_pool element", patch(t, "factcheck_v1_request.json", "session_pool", `["201", `+tc.id+`, "203"]`), new(router.FactcheckV1Request), topPool)
		})
	}
}

// TestSessionID_sameFromBothForms decodes requests and jobs with integer
// ids and with string ids and expects equal values.
func TestSessionID_sameFromBothForms(t *testing.T) {
	for _, tc := range []struct {
		ints, strs string
		new        func() any
	}{
		{`{"session_id": 7, "claim": "c", "session_pool": [201, 202]}`, `{"session_id": "7", "claim": "c", "session_pool": ["201", "202"]}`,
			func() any { return new(router.FactcheckV1Request) }},
		{`{"session_id": 7, "task_request_input": "x"}`, `{"session_id": "7", "task_request_input": "x"}`,
			func() any { return new(router.DelegateV1Request) }},
		{`{"kind": "factcheck", "session_id": 7, "task_id": "t"}`, `{"kind": "factcheck", "session_id": "7", "task_id": "t"}`,
			func() any { return new(router.Job) }},
		{`{"sessions": [{"session_id": 7, "health": "healthy", "failures": 0}]}`, `{"sessions": [{"session_id": "7", "health": "healthy", "failures": 0}]}`,
			func() any { return new(router.Status) }},
	} {
		a, b := tc.new(), tc.new()
		if err := jsonbody.Unmarshal([]byte(tc.ints), a); err != nil {
			t.Fatalf("%s: %v", tc.ints, err)
		}
		if err := jsonbody.Unmarshal([]byte(tc.strs), b); err != nil {
			t.Fatalf("%s: %v", tc.strs, err)
		}
		if diff := cmp.Diff(a, b, wireOpts); diff != "" {
			t.Errorf("%T: integer ids and string ids decode differently (-int +string):\n%s", a, diff)
		}
		if enc, _ := json.Marshal(b); !strings.Contains(string(enc), `"session_id":7`) {
			t.Errorf("%T decoded from string ids encodes as %s, want integer ids", b, enc)
		}
	}

	var a, b router.FactcheckRequest
	if err := jsonbody.Unmarshal([]byte(`{"session_id": 7, "claim": "c", "consensus": {"replicas": 3, "session_pool": [201, 202, 203]}}`), &a); err != nil {
		t.Fatal(err)
	}
	if err := jsonbody.Unmarshal([]byte(`{"session_id": "7", "claim": "c", "consensus": {"replicas": 3, "session_pool": ["201", "202", "203"]}}`), &b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b, wireOpts); diff != "" {
		t.Errorf("integer ids and string ids decode differently (-int +string):\n%s", diff)
	}
	if a.SessionID != 7 || len(a.Consensus.SessionPool) != 3 {
		t.Errorf("decoded %+v", a)
	}
}

// TestHandler_factcheckV1_sessionIDs sends factcheck v1 requests to the
// route and its alias: ids in either form reach the Service as the same
// request, and a malformed id is a 400 naming its field that never
// reaches the Service.
func TestHandler_factcheckV1_sessionIDs(t *testing.T) {
	svc := &fakeService{}
	srv := newTestServer(t, svc)
	paths := []string{"/api/v1/factcheck", "/api/v1/fact-check"}

	var want any
	for _, body := range []string{
		`{"claim":"c","session_id":7,"session_pool":[201,202,203]}`,
		`{"claim":"c","session_id":"7","session_pool":["201","202","203"]}`,
		`{"claim":"c","session_id":"007","session_pool":[201,"202",203]}`,
	} {
		for _, path := range paths {
			if r := send(t, "POST", srv.URL+path, body); r.status != http.StatusOK {
				t.Fatalf("%s %s = %d %s, want 200", path, body, r.status, r.body)
			}
			svc.mu.Lock()
			got := svc.lastReq
			svc.mu.Unlock()
			if want == nil {
				want = got
			} else if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: request differs from the first (-first +this):\n%s", path, body, diff)
			}
		}
	}

	for _, tc := range []struct {
		member, value, field string
	}{
		{"session_id", `1.5`, "session_id"},
		{"session_id", `"1.5"`, "session_id"},
		{"session_id", `"abc"`, "session_id"},
		{"session_id", `""`, "session_id"},
		{"session_id", `"+1"`, "session_id"},
		{"session_id", `" 1"`, "session_id"},
		{"session_id", `"0x10"`, "session_id"},
		{"session_id", `1e3`, "session_id"},
		{"session_id", `"99999999999999999999"`, "session_id"},
		{"session_id", `true`, "session_id"},
		{"session_id", `{}`, "session_id"},
		{"session_id", `[7]`, "session_id"},
		{"session_id", `-7`, "session_id"},
		{"session_id", `"-7"`, "session_id"},
		{"session_pool", `"201"`, "session_pool"},
		{"session_pool", `{"0":201}`, "session_pool"},
		{"session_pool", `["201","x"]`, "session_pool[1]"},
		{"session_pool", `[201,2.5]`, "session_pool[1]"},
		{"session_pool", `[201,null]`, "session_pool[1]"},
		{"session_pool", `["201","0"]`, "session_pool[1]"},
		{"session_pool", `[201,-3]`, "session_pool[1]"},
		{"session_pool", `["201","201"]`, "session_pool"},
	} {
		body := `{"claim":"c","` + tc.member + `":` + tc.value + `}`
		for _, path := range paths {
			before := svc.calls.Load()
			r := send(t, "POST", srv.URL+path, body)
			if r.status != http.StatusBadRequest {
				t.Errorf("%s %s = %d %s, want 400", path, body, r.status, r.body)
				continue
			}
			p := r.problem(t)
			if len(p.Errors) != 1 || p.Errors[0].Field != tc.field {
				t.Errorf("%s %s: field errors %+v, want one naming %s", path, body, p.Errors, tc.field)
			}
			if svc.calls.Load() != before {
				t.Errorf("%s %s reached the Service", path, body)
			}
		}
	}
}
