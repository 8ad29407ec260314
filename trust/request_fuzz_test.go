package trust_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// recordingCaller keeps the last request the Handler passed on and
// answers it VALID.
type recordingCaller struct{ last *trust.Request }

func (c *recordingCaller) Call(_ context.Context, req *trust.Request) (*trust.Response, error) {
	c.last = req
	return &trust.Response{Status: trust.StatusValid, Confidence: 0.9, TraceID: "t"}, nil
}

// jsonSame reports whether a and b are the same JSON value, numbers
// as written, or both empty.
func jsonSame(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	x, errA := decodeNumbers(a)
	y, errB := decodeNumbers(b)
	return errA == nil && errB == nil && cmp.Equal(x, y)
}

// decodeNumbers decodes data, one JSON value, with its numbers as
// written.
func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// requestOpts compare requests by what they say on the wire.
var requestOpts = cmp.Options{
	cmp.Comparer(func(a, b router.Input) bool { return a.Kind() == b.Kind() && jsonSame(a.Raw(), b.Raw()) }),
	cmp.FilterValues(func(a, b json.RawMessage) bool { return len(a) > 0 || len(b) > 0 },
		cmp.Comparer(func(a, b json.RawMessage) bool { return jsonSame(a, b) })),
	cmpopts.EquateEmpty(),
}

// FuzzHandler_requestRoundTrip posts any body to POST /api/v4/trust
// through the real Handler: a body the Handler accepts reaches the
// Caller as a request that validates, and that request, encoded as JSON
// and posted again, is accepted and reaches the Caller as the same
// request; a body it refuses is a 4xx problem, never a 5xx.
func FuzzHandler_requestRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"mode":"validation","policy":"safe","task":{"type":"tool_output","claimed_result":"17 * 3 = 51"},"receipt":{"mode":"inline"}}`,
		`{"mode":"delegation","policy":"adaptive","task":{"type":"qa","input":"How many apples?","answer":"number","tolerance":{"absolute":0.5}}}`,
		`{"mode":"arbitration","policy":"oracle","task":{"claimed_result":{"a":1},"dispute_context":"late","spec":"on time"},"context":{"agent_id":"a1"},"metadata":{"client_trace_id":"c","n":12345678901234567890}}`,
		`{"mode":"delegation","policy":"safe","task":{"input":{"kind":"array","items":[1,"2",{"3":null}]}},"delegation":{"agreement":"judged"}}`,
		`{"mode":"delegation","policy":"fast","task":{"input":"Paris"},"receipt":{"mode":"detached","include":{"input":true}}}`,
		`{"mode":"validation","policy":"safe","task":{"claimed_result":1e400}}`,
		`{"mode":"validation","policy":"safe","task":{"claimed_result":"\ud800"}}`,
		`{"mode":"validation","mode":"delegation","policy":"safe","task":{"claimed_result":1}}`,
	} {
		f.Add([]byte(s))
	}
	c := &recordingCaller{}
	h, err := trust.NewHandler(c, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "k"})), trust.WithMaxBodyBytes(4096))
	if err != nil {
		f.Fatal(err)
	}
	post := func(t *testing.T, body []byte) (int, *trust.Request) {
		c.last = nil
		r := httptest.NewRequest(http.MethodPost, trust.CallPath, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			var p trust.Error
			if w.Code < 400 || w.Code > 499 || json.Unmarshal(w.Body.Bytes(), &p) != nil || p.Status != w.Code {
				t.Fatalf("status %d (%s) for body %q", w.Code, w.Body, body)
			}
			if c.last != nil {
				t.Fatalf("status %d for body %q, but the Caller was called", w.Code, body)
			}
		}
		return w.Code, c.last
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		status, first := post(t, body)
		if status != http.StatusOK {
			return
		}
		if first == nil {
			t.Fatalf("200 for body %q without a call", body)
		}
		if err := first.Validate(); err != nil {
			t.Fatalf("body %q reached the Caller as a request that does not validate: %v", body, err)
		}
		enc, err := json.Marshal(first)
		if err != nil {
			t.Fatalf("encoding the request of %q: %v", body, err)
		}
		status, second := post(t, enc)
		if status != http.StatusOK || second == nil {
			t.Fatalf("the encoding %s of the request of %q is refused: %d", enc, body, status)
		}
		if diff := cmp.Diff(first, second, requestOpts); diff != "" {
			t.Fatalf("decode(encode(v)) differs from v (-v +decoded):\n%s\nbody: %q\nencoding: %s", diff, body, enc)
		}
	})
}
