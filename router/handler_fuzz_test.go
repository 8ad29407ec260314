package router

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/internal/traceparent"
)

// echoService answers every operation with an empty response.
type echoService struct{}

func (echoService) DelegateV1(context.Context, *DelegateV1Request) (*DelegateV1Response, error) {
	return &DelegateV1Response{}, nil
}
func (echoService) ValidateV1(context.Context, *ValidateV1Request) (*ValidateV1Response, error) {
	return &ValidateV1Response{}, nil
}
func (echoService) DelegateV2(context.Context, *DelegateV2Request) (*DelegateV2Response, error) {
	return &DelegateV2Response{}, nil
}
func (echoService) ValidateV2(context.Context, *ValidateV2Request) (*ValidateV2Response, error) {
	return &ValidateV2Response{}, nil
}
func (echoService) DelegateV3(context.Context, *DelegateV3Request) (*DelegateV3Response, error) {
	return &DelegateV3Response{}, nil
}
func (echoService) ValidateV3(context.Context, *ValidateV3Request) (*ValidateV3Response, error) {
	return &ValidateV3Response{}, nil
}
func (echoService) FactcheckV1(context.Context, *FactcheckV1Request) (*FactcheckResponse, error) {
	return &FactcheckResponse{}, nil
}
func (echoService) Factcheck(context.Context, *FactcheckRequest) (*FactcheckResponse, error) {
	return &FactcheckResponse{}, nil
}

// FuzzHandler sends arbitrary bodies and headers to every route, with
// the route's method: the Handler must answer 200 with JSON, or a problem
// with a 4xx status.
func FuzzHandler(f *testing.F) {
	f.Add(uint8(0), []byte(`{"session_id":1,"task_request_input":"x"}`), "", "")
	f.Add(uint8(4), []byte(`{"objective":"o","consensus":{"replicas":3,"session_pool":["1","2"]}}`), "k", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add(uint8(5), []byte(`{"claim":{"type":"t","output":null},"consensus":{"replicas":2}}`), "", "")
	f.Add(uint8(2), []byte(`{"session_id":1,"objective":"o","input":[1,2]}`), "key with space", "")
	f.Add(uint8(1), []byte(`{"session_id":1e3}`), "", "garbage")
	f.Add(uint8(7), []byte(`{"claim":"c","session_pool":["1","x"],"policy":{"redundancy":1}}`), "k2", "")
	f.Add(uint8(24), []byte(``), "", "")
	h, err := NewHandler(echoService{}, WithAuthenticator(KeyAuthenticator(map[string]string{"k": "k"})), WithMaxBodyBytes(4096),
		WithX402(func(next http.Handler) http.Handler { return next }))
	if err != nil {
		f.Fatal(err)
	}
	routes := Routes()
	f.Fuzz(func(t *testing.T, route uint8, body []byte, idemKey, traceHeader string) {
		rt := routes[int(route)%len(routes)]
		r := httptest.NewRequest(rt.Method, rt.Path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		if idemKey != "" && !strings.ContainsAny(idemKey, "\r\n\x00") {
			r.Header.Set("Idempotency-Key", idemKey)
		}
		r.Header.Set("traceparent", traceHeader)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch {
		case w.Code == http.StatusOK:
			if !json.Valid(w.Body.Bytes()) {
				t.Fatalf("200 with a body that is not JSON: %q", w.Body)
			}
		case w.Code >= 400 && w.Code < 500:
			var p Error
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Status != w.Code || p.RequestID == "" {
				t.Fatalf("status %d with body %q, want a problem with the same status and a request id", w.Code, w.Body)
			}
		default:
			t.Fatalf("status %d (%s) for body %q", w.Code, w.Body, body)
		}
		if tp := w.Header().Get("traceparent"); tp != "" {
			if id, _, ok := traceparent.Parse(traceHeader); !ok || !strings.Contains(tp, id) {
				t.Fatalf("traceparent %q answered with %q", traceHeader, tp)
			}
		}
	})
}
