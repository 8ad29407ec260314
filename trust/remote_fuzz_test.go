package trust_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// FuzzRemoteRouter has a remote router on loopback answer every call of
// the service's router.Client with any status and body: a result, or a
// problem whose extra member holds the evidence the service keeps (the
// runs and consensus of a disagreement, the run of a failed replica).
// The trust call never panics; it makes one router call for oracle and
// at most 5 for adaptive (one run each; GETs of the sessions' status
// aside); and it answers a problem of status 400 to 599 (or the
// router's own problem, whatever its status), an error wrapping
// router.ErrMalformedResponse, or a response that encodes as JSON, with
// a status of a trust call and a confidence within [0, 1].
func FuzzRemoteRouter(f *testing.F) {
	f.Add(uint8(0), 409, []byte(`{"type":"urn:vouch:problem:disagreement","title":"Conflict","status":409,"code":"disagreement","detail":"the replicas disagree","extra":{"runs":[{"replica":0,"session_id":1,"task_id":"t1","label":"VALID","confidence":0.9},{"replica":1,"session_id":"2","label":"INVALID"}],"consensus":{"replicas":5,"agreement":0.4,"confidence":0.5,"verdicts":["VALID","INVALID"]}}}`))
	f.Add(uint8(1), 502, []byte(`{"title":"Bad Gateway","status":502,"code":"unavailable","extra":{"runs":[{"session_id":3,"label":"ERROR","error":"worker failed"}]}}`))
	f.Add(uint8(0), 200, []byte(`{"request_id":"r","verdict":"VALID","confidence":0.9,"consensus":{"replicas":5,"agreement":1,"confidence":0.9,"verdicts":["VALID","VALID","VALID","VALID","VALID"]},"evidence":{"runs":[{"session_id":1,"label":"VALID"},{"session_id":2,"label":"VALID"},{"session_id":3,"label":"VALID"},{"session_id":4,"label":"VALID"},{"session_id":5,"label":"VALID"}]}}`))
	f.Add(uint8(1), 200, []byte(`{"verdict":"VALID","confidence":0.9,"evidence":{"runs":[{"session_id":7,"label":"VALID","confidence":0.8}]}}`))
	f.Add(uint8(3), 200, []byte(`{"task_id":"t","result":"51","consensus":{"agreement":7,"confidence":-1},"evidence":{"runs":[{"session_id":1,"label":"OK","output":"51"}]}}`))
	// A router call of one replica answered with no run, or with a
	// disagreement of none: a run that failed, not a call to repeat.
	f.Add(uint8(1), 200, []byte(`{"verdict":"VALID","confidence":0.9}`))
	f.Add(uint8(3), 409, []byte(`{"status":409,"code":"disagreement","extra":[]}`))
	f.Add(uint8(2), 504, []byte(`gateway timeout`))
	var (
		mu     sync.Mutex
		status int
		body   []byte
		calls  int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodPost { // a run; GET asks the sessions' status
			calls++
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	f.Cleanup(srv.Close)
	rc, err := router.NewClient(srv.URL, router.WithHTTPClient(srv.Client()), router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		f.Fatal(err)
	}
	svc, err := trust.New(rc)
	if err != nil {
		f.Fatal(err)
	}
	reqs := []trust.Request{
		{Mode: trust.ModeValidation, Policy: trust.PolicyOracle, Task: trust.Task{ClaimedResult: json.RawMessage(`"51"`)}},
		{Mode: trust.ModeValidation, Policy: trust.PolicyAdaptive, Task: trust.Task{ClaimedResult: json.RawMessage(`"51"`)}},
		{Mode: trust.ModeDelegation, Policy: trust.PolicyOracle, Task: trust.Task{Input: router.NewStringInput("17 * 3")}},
		{Mode: trust.ModeDelegation, Policy: trust.PolicyAdaptive, Task: trust.Task{Input: router.NewStringInput("17 * 3")}},
	}
	statuses := []trust.Status{trust.StatusValid, trust.StatusInvalid, trust.StatusRetry, trust.StatusNeedsSpec}
	f.Fuzz(func(t *testing.T, which uint8, st int, b []byte) {
		if st < 200 || st > 599 {
			st = 200 + (st%400+400)%400
		}
		mu.Lock()
		status, body, calls = st, b, 0
		mu.Unlock()
		req := reqs[int(which)%len(reqs)]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound, should a call not end
		defer cancel()
		resp, err := svc.Call(ctx, &req)
		mu.Lock()
		n := calls
		mu.Unlock()
		if most := map[trust.Policy]int{trust.PolicyOracle: 1, trust.PolicyAdaptive: 5}[req.Policy]; n > most {
			t.Fatalf("%d %q: %d router calls for %s", st, b, n, req.Policy)
		}
		if err != nil {
			var p *problem.Details
			switch {
			case errors.Is(err, router.ErrMalformedResponse): // the router's answer, unread
			case !errors.As(err, &p) || (p.Status < 400 || p.Status > 599) && p.Status != st: // the router's own problem passes on
				t.Fatalf("%d %q: error %v (%T), want a problem", st, b, err, err)
			}
			return
		}
		if _, err := json.Marshal(resp); err != nil {
			t.Fatalf("%d %q: the response does not encode: %v", st, b, err)
		}
		if !slices.Contains(statuses, resp.Status) || !(resp.Confidence >= 0 && resp.Confidence <= 1) {
			t.Fatalf("%d %q: response status %q, confidence %v", st, b, resp.Status, resp.Confidence)
		}
	})
}

// FuzzClientResponse has a remote trust service answer any status and
// body to each of the Client's calls: a non-2xx answer is an *Error with
// that status, a 2xx one a result or an error wrapping
// router.ErrMalformedResponse, never anything else; a fetched receipt is
// JSON; and a result encodes to JSON that reads back to the same
// encoding.
func FuzzClientResponse(f *testing.F) {
	f.Add(uint8(0), 200, []byte(`{"status":"VALID","confidence":0.9,"evidence":{"redundancy":3,"agreement":1,"launched":3},"receipt":{"receipt_id":"rcpt_x"},"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}`))
	f.Add(uint8(1), 200, []byte(` {"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"} `))
	f.Add(uint8(2), 200, []byte(`{"valid":false,"checks":[{"name":"signature","ok":false}]}`))
	f.Add(uint8(3), 404, []byte(`{"status":404,"code":"not_found","title":"Not Found"}`))
	f.Add(uint8(0), 200, []byte(`{"status":7}`))
	var (
		mu     sync.Mutex
		status int
		body   []byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	f.Cleanup(srv.Close)
	c, err := trust.NewClient(srv.URL, trust.WithHTTPClient(srv.Client()), trust.WithRetry(router.RetryPolicy{}), trust.WithAPIKey("k"))
	if err != nil {
		f.Fatal(err)
	}
	calls := []func(context.Context) (any, error){
		func(ctx context.Context) (any, error) {
			return c.Call(ctx, &trust.Request{Mode: trust.ModeValidation, Task: trust.Task{ClaimedResult: json.RawMessage(`"51"`)}})
		},
		func(ctx context.Context) (any, error) { return c.FetchReceipt(ctx, "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa") },
		func(ctx context.Context) (any, error) {
			return c.VerifyReceipt(ctx, &receipt.VerifyRequest{Receipt: json.RawMessage(`{}`)})
		},
		func(ctx context.Context) (any, error) {
			return nil, c.Feedback(ctx, "4bf92f3577b34da6a3ce929d0e0e4736", true)
		},
	}
	f.Fuzz(func(t *testing.T, call uint8, st int, b []byte) {
		if st < 200 || st > 599 {
			st = 200 + (st%400+400)%400
		}
		mu.Lock()
		status, body = st, b
		mu.Unlock()
		out, err := calls[int(call)%len(calls)](context.Background())
		var p *trust.Error
		switch {
		case st > 299:
			if !errors.As(err, &p) || p.Status != st {
				t.Fatalf("%d %q: error %v, want an *Error of status %d", st, b, err, st)
			}
		case err != nil:
			if !errors.Is(err, router.ErrMalformedResponse) {
				t.Fatalf("%d %q: error %v, want one wrapping ErrMalformedResponse", st, b, err)
			}
		case out == nil:
		default:
			if raw, ok := out.(json.RawMessage); ok {
				if !json.Valid(raw) {
					t.Fatalf("%d %q: fetched a receipt %q that is not JSON", st, b, raw)
				}
				return
			}
			enc, err := json.Marshal(out)
			if err != nil {
				t.Fatalf("%+v does not encode: %v", out, err)
			}
			again := reflect.New(reflect.TypeOf(out).Elem()).Interface()
			if err := json.Unmarshal(enc, again); err != nil {
				t.Fatalf("%s does not decode again: %v", enc, err)
			}
			if enc2, err := json.Marshal(again); err != nil || !bytes.Equal(enc, enc2) {
				t.Fatalf("%s decodes to a value encoding %s (%v)", enc, enc2, err)
			}
		}
	})
}
