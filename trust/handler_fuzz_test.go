package trust_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// FuzzHandler sends arbitrary bodies to the trust call: the Handler must
// answer 200 with a JSON Response, or a problem with a 4xx status, the
// same status in its body and a request id.
func FuzzHandler(f *testing.F) {
	f.Add([]byte(`{"mode":"validation","policy":"safe","task":{"claimed_result":"x"}}`))
	f.Add([]byte(`{"mode":"arbitration","policy":"oracle","task":{"claimed_result":{"a":1},"dispute_context":"late"}}`))
	f.Add([]byte(`{"mode":"delegation","policy":"adaptive","task":{"input":{"kind":"array","items":[1]}}}`))
	f.Add([]byte(`{"mode":"delegation","policy":"fast","task":{"input":[1,2]}}`))
	f.Add([]byte(`{"mode":7}`))
	svc, err := trust.New(unanimous{})
	if err != nil {
		f.Fatal(err)
	}
	fuzzRoute(f, svc, trust.CallPath, func(data []byte) bool {
		var resp trust.Response
		return json.Unmarshal(data, &resp) == nil && resp.Status != ""
	})
}

// FuzzHandler_feedback sends arbitrary bodies to POST /api/v4/feedback on
// a service that keeps reputation: the Handler must answer 200 with the
// report repeated (right or verdict, exactly one), or a problem with a
// 4xx status, the same status in its body and a request id.
func FuzzHandler_feedback(f *testing.F) {
	f.Add([]byte(`{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","right":false}`))
	f.Add([]byte(`{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa","right":true}`))
	f.Add([]byte(`{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","verdict":"INVALID"}`))
	f.Add([]byte(`{"trace_id":"t","right":true,"verdict":"VALID"}`))
	f.Add([]byte(`{"trace_id":"t","verdict":"RETRY"}`))
	e, err := router.NewEngine(routertest.Sessions(1, 2, honest(0.9), honest(0.9), honest(0.9)))
	if err != nil {
		f.Fatal(err)
	}
	svc, err := trust.New(e)
	if err != nil {
		f.Fatal(err)
	}
	fuzzRoute(f, svc, trust.FeedbackPath, func(data []byte) bool {
		var resp trust.FeedbackResponse
		return json.Unmarshal(data, &resp) == nil && (resp.Right == nil) != (resp.Verdict == "")
	})
}

// fuzzRoute fuzzes POST path of a Handler on c with arbitrary bodies: it
// must answer 200 with a body ok accepts, or a problem with a 4xx
// status, the same status in its body and a request id.
func fuzzRoute(f *testing.F, c trust.Caller, path string, ok func([]byte) bool) {
	h, err := trust.NewHandler(c, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "k"})), trust.WithMaxBodyBytes(4096))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch {
		case w.Code == http.StatusOK:
			if !ok(w.Body.Bytes()) {
				t.Fatalf("200 with body %q for body %q", w.Body, body)
			}
		case w.Code >= 400 && w.Code < 500:
			var p trust.Error
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != w.Code || p.RequestID == "" {
				t.Fatalf("status %d with body %q, want a problem with the same status and a request id", w.Code, w.Body)
			}
		default:
			t.Fatalf("status %d (%s) for body %q", w.Code, w.Body, body)
		}
	})
}
