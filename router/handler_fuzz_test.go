package router

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
func (echoService) Factcheck(context.Context, *FactcheckRequest) (*FactcheckResponse, error) {
	return &FactcheckResponse{}, nil
}

// FuzzHandler sends arbitrary bodies and headers to every route: the
// Handler must answer 200 with JSON, or a problem with a 4xx status.
func FuzzHandler(f *testing.F) {
	f.Add(uint8(0), []byte(`{"session_id":1,"task_request_input":"x"}`), "", "")
	f.Add(uint8(4), []byte(`{"objective":"o","consensus":{"replicas":3,"session_pool":["1","2"]}}`), "k", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add(uint8(5), []byte(`{"claim":{"type":"t","output":null},"consensus":{"replicas":2}}`), "", "")
	f.Add(uint8(2), []byte(`{"session_id":1,"objective":"o","input":[1,2]}`), "key with space", "")
	f.Add(uint8(1), []byte(`{"session_id":1e3}`), "", "garbage")
	h, err := NewHandler(echoService{}, WithAuthenticator(KeyAuthenticator(map[string]string{"k": "k"})), WithMaxBodyBytes(4096),
		WithX402(func(next http.Handler) http.Handler { return next }))
	if err != nil {
		f.Fatal(err)
	}
	routes := Routes()
	f.Fuzz(func(t *testing.T, route uint8, body []byte, idemKey, traceparent string) {
		rt := routes[int(route)%len(routes)]
		r := httptest.NewRequest(http.MethodPost, rt.Path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		if idemKey != "" && !strings.ContainsAny(idemKey, "\r\n\x00") {
			r.Header.Set("Idempotency-Key", idemKey)
		}
		r.Header.Set("traceparent", traceparent)
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
			if id, _, ok := parseTraceparent(traceparent); !ok || !strings.Contains(tp, id) {
				t.Fatalf("traceparent %q answered with %q", traceparent, tp)
			}
		}
	})
}

// FuzzResponseProblem decodes arbitrary error bodies as the Client does:
// the result always carries the response's status and never panics.
func FuzzResponseProblem(f *testing.F) {
	f.Add(502, []byte(`{"type":"urn:vouch:problem:internal","title":"Bad Gateway","status":502,"code":"internal"}`))
	f.Add(429, []byte(`rate limited`))
	f.Add(400, []byte(`{"status":"400","errors":[{"field":1}]}`))
	f.Add(404, []byte(``))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			status = 500
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{HeaderRequestID: {"req_1"}}}
		p := responseProblem(resp, body)
		if p.Status != status || p.RequestID == "" || p.Title == "" && http.StatusText(status) != "" {
			t.Fatalf("problem %+v for status %d body %q", p, status, body)
		}
		_ = p.Error()
	})
}

// FuzzParseTraceparent checks that whatever parses has a well-formed trace
// id that survives a round trip through newTraceparent.
func FuzzParseTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-ever")
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	f.Fuzz(func(t *testing.T, v string) {
		id, flags, ok := parseTraceparent(v)
		if !ok {
			return
		}
		if len(id) != 32 || !lowerHex(id) || allZero(id) || len(flags) != 2 {
			t.Fatalf("parseTraceparent(%q) = %q, %q", v, id, flags)
		}
		if id2, flags2, ok := parseTraceparent(newTraceparent(id, flags)); !ok || id2 != id || flags2 != flags {
			t.Fatalf("round trip of %q gave %q %q %v", v, id2, flags2, ok)
		}
	})
}
