package trusta2a_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestResponseCarriesRequestID checks that an answer's id is the
// request's exactly, in either version, whether the SDK answers (0.3) or
// not: a number beyond float64's integers (9007199254740993) is not
// rounded, one that no float64 holds (1e400) is read, and a string is
// the string sent.
func TestResponseCarriesRequestID(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	send := `{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":{"claimed_result":"51","input":"What is 17 * 3?"}}]}}`
	requests := []struct{ version, method, params string }{
		{"0.3", "tasks/get", `{"id":"nope"}`},
		{"0.3", "tasks/cancel", `{"id":"nope"}`},
		{"0.3", "message/send", send},
		{"1.0", "GetTask", `{"id":"nope"}`},
	}
	for _, id := range []string{`9007199254740993`, `1e400`, `-1.5`, `12345678901234567891`, `"9007199254740993"`, `"a\u00e9"`, `7`} {
		for _, r := range requests {
			body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + r.method + `","params":` + r.params + `}`
			req, err := http.NewRequest(http.MethodPost, f.url+"/a2a", bytes.NewReader([]byte(body)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer demo-key")
			req.Header.Set("A2A-Version", r.version)
			resp, err := f.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var out struct{ ID json.RawMessage }
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			var want, got any
			dec := func(raw string, v *any) {
				d := json.NewDecoder(bytes.NewReader([]byte(raw)))
				d.UseNumber()
				if err := d.Decode(v); err != nil {
					t.Fatalf("%s: id %s: %v", body, raw, err)
				}
			}
			dec(id, &want)
			dec(string(out.ID), &got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: the answer's id differs from the request's (-sent +answered):\n%s", r.version, r.method, diff)
			}
		}
	}
}

// TestRequestIDBeyondFloat64_version03 checks that a 0.3 request whose
// id is a number no float64 holds is served as any other, not refused
// as a parse error naming Go types.
func TestRequestIDBeyondFloat64_version03(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	_, rerr := f.post1(t, "demo-key", "0.3", `{"jsonrpc":"2.0","id":1e400,"method":"tasks/get","params":{"id":"nope"}}`)
	if rerr == nil || rerr.Code != -32001 {
		t.Errorf("tasks/get of an unknown task, id 1e400: %+v, want -32001 task not found", rerr)
	}
}
