package trust_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/router"
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
	h, err := trust.NewHandler(svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "k"})), trust.WithMaxBodyBytes(4096))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, trust.CallPath, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch {
		case w.Code == http.StatusOK:
			var resp trust.Response
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Status == "" {
				t.Fatalf("200 with body %q: %v", w.Body, err)
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
