package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// doorsProblem is the RFC 9457 body the fuzz target reads.
type doorsProblem struct {
	Title, Code string
	Status      int
	RequestID   string `json:"request_id"`
	Errors      []struct{ Field, Rule, Message string }
}

// doorRoute is one door of the demo server the fuzzer sends bodies to.
type doorRoute struct {
	path string
	paid bool // takes the fuzzed payment header (PAYMENT-SIGNATURE)
}

var doorRoutes = []doorRoute{
	{"/api/v3/validate", false},
	{"/api/v4/trust", false},
	{mcpPath, false},
	{a2aPath, false},
	{"/api/v1/x402/validate", true},
	{"/api/v4/x402/trust", true},
	{"/api/v2/validate", false},
	{"/api/v3/delegate", false},
	{"/api/v3/factcheck", false},
	{"/api/v1/factcheck", false},
}

// FuzzServerDoors sends arbitrary bodies (and, to the paid routes, an
// arbitrary PAYMENT-SIGNATURE header) to the doors of the demo server
// as newServer builds it in process: the router's and the trust
// service's routes, MCP over HTTP, A2A JSON-RPC and the x402 routes,
// over the demo engine. Every HTTP answer is 200, 202 or a problem with a
// code; no 5xx other than a 504 timeout; a 400 invalid_request names its
// fields; an MCP tool error or a JSON-RPC error is never the "internal"
// or "unavailable" answer kept for the server's own faults.
func FuzzServerDoors(f *testing.F) {
	ctx := context.Background()
	h := doorsServer(f)

	// A payment for each paid route, from the terms of its 402.
	payer, err := evm.NewPayer(strings.Repeat("47", 32))
	if err != nil {
		f.Fatal(err)
	}
	pay := func(path, body string) string {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		terms, err := x402.DecodePaymentRequired(w.Header().Get(x402.HeaderPaymentRequired))
		if err != nil || len(terms.Accepts) == 0 {
			f.Fatalf("%s unpaid: %d %s, terms %v", path, w.Code, w.Body, err)
		}
		offer := terms.Accepts[0]
		proof, err := payer.Pay(ctx, offer)
		if err != nil {
			f.Fatal(err)
		}
		signed, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: x402.Version2, Accepted: offer, Payload: proof.Payload})
		if err != nil {
			f.Fatal(err)
		}
		return signed
	}
	v2body := `{"session_id":1,"claim":{"type":"summary","output":"17 * 3 = 51"}}`
	trustBody := `{"mode":"validation","policy":"safe","task":{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?"}}`
	paidV1 := `{"session_id":1,"task_request_input":"What is 17 * 3?","task_result_output":"17 * 3 = 51"}`
	mcpCall := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	seeds := []struct {
		route         uint8
		body, payment string
	}{
		{0, `{"claim":{"type":"summary","output":"17 * 3 = 51"},"consensus":{"replicas":3}}`, ""},
		{0, `{"claim":{"type":"summary","output":"17 * 3 = 51"},"consensus":{"replicas":5,"aggregation":"weighted","disagreement_policy":"fail_hard"},"policy":{"tier":"oracle"}}`, ""},
		{1, trustBody, ""},
		{1, `{"mode":"delegation","policy":"adaptive","task":{"input":"17 * 3","answer":"number","tolerance":{"absolute":0.5}},"receipt":{"mode":"inline","include":{"consensus_snapshot":true}}}`, ""},
		{1, `{"mode":"arbitration","policy":"oracle","task":{"claimed_result":"17 * 3 = 50","dispute_context":{"buyer":"50 is wrong"}},"receipt":{"mode":"detached","visibility":"shared","counterparties":["demo"]}}`, ""},
		{2, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ""},
		{2, mcpCall("validate_claim", `{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?","policy":"oracle","receipt":"inline"}`), ""},
		{2, mcpCall("delegate_task", `{"input":"how many?","answer":"number","tolerance":{"absolute":0.5,"relative":0.01}}`), ""},
		{2, mcpCall("arbitrate", `{"claimed_result":{"answer":51},"dispute_context":"the buyer says 50","policy":"adaptive"}`), ""},
		{2, mcpCall("factcheck", `{"claim":"17 * 3 = 51","mode":"realtime","replicas":5}`), ""},
		{2, mcpCall("get_receipt", `{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}`), ""},
		{2, mcpCall("verify_receipt", `{"receipt":"{\"receipt_id\":\"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa\"}"}`), ""},
		{2, mcpCall("report_outcome", `{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","right":true}`), ""},
		{3, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Is it true that 17 * 3 = 51?"}]}}}`, ""},
		{3, `{"jsonrpc":"2.0","id":"a","method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":{"claimed_result":"51","input":"17 * 3","policy":"fast"}}]}}}`, ""},
		{3, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"t"}}`, ""},
		{3, `{"jsonrpc":"2.0","id":4,"method":"ListTasks","params":{}}`, ""},
		{4, paidV1, pay("/api/v1/x402/validate", paidV1)},
		{5, trustBody, pay("/api/v4/x402/trust", trustBody)},
		{4, paidV1, ""},
		{6, v2body, ""},
		{7, `{"objective":"17 * 3","consensus":{"replicas":3,"aggregation":"median"}}`, ""},
		{8, `{"claim":"17 * 3 = 51","consensus":{"replicas":3}}`, ""},
		{9, `{"claim":"17 * 3 = 51","policy":{"redundancy":5}}`, ""},
	}
	for _, sd := range seeds {
		f.Add(sd.route, []byte(sd.body), sd.payment)
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte, payment string) {
		rt := doorRoutes[int(route)%len(doorRoutes)]
		r := httptest.NewRequest(http.MethodPost, rt.path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if rt.paid {
			if strings.ContainsAny(payment, "\r\n\x00") {
				return // not a header value
			}
			if payment != "" {
				r.Header.Set(x402.HeaderPaymentSignature, payment)
			}
		} else {
			r.Header.Set("Authorization", "Bearer "+defaultAPIKey)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if testing.Verbose() {
			t.Logf("%s %d %.300s", rt.path, w.Code, w.Body)
		}
		ct := w.Header().Get("Content-Type")
		switch {
		case w.Code == http.StatusOK || w.Code == http.StatusAccepted:
			if (rt.path == mcpPath || rt.path == a2aPath) && strings.HasPrefix(ct, "application/json") {
				checkRPC(t, rt.path, w.Body.Bytes(), body)
			}
			return
		case w.Code == http.StatusPaymentRequired && rt.paid:
			if _, err := x402.DecodePaymentRequired(w.Header().Get(x402.HeaderPaymentRequired)); err != nil {
				t.Fatalf("%s: 402 without terms (%v) for %q / %q", rt.path, err, body, payment)
			}
			return
		case w.Code == http.StatusBadRequest && rt.path == mcpPath && strings.HasPrefix(ct, "text/plain"):
			return // the SDK's refusal of a JSON value that is no JSON-RPC message: documented
		case w.Code == http.StatusTooManyRequests:
			return
		}
		var p doorsProblem
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || !strings.HasPrefix(ct, "application/problem+json") {
			t.Fatalf("%s: %d %q (%s) is not a problem, for %q / %q", rt.path, w.Code, ct, w.Body, body, payment)
		}
		if p.Code == "" || p.Status != w.Code || p.RequestID == "" || p.Title == "" {
			t.Fatalf("%s: %d problem without code/status/request id/title: %s for %q / %q", rt.path, w.Code, w.Body, body, payment)
		}
		switch {
		case w.Code == http.StatusBadRequest && p.Code == "invalid_request":
			if len(p.Errors) == 0 {
				t.Fatalf("%s: 400 invalid_request with no field errors: %s for %q / %q", rt.path, w.Body, body, payment)
			}
			for _, e := range p.Errors {
				if e.Field == "" || e.Rule == "" {
					t.Fatalf("%s: field error without field or rule: %s for %q / %q", rt.path, w.Body, body, payment)
				}
			}
		case w.Code >= 400 && w.Code < 500:
		case w.Code == http.StatusGatewayTimeout && p.Code == "timeout":
		// Workers that failed (an output out of bounds is an ERROR run) are
		// the server's conditions, not the request's: documented answers.
		case w.Code == http.StatusBadGateway && p.Code == "all_replicas_failed":
		case w.Code == http.StatusServiceUnavailable && p.Code == "insufficient_sessions":
		default:
			t.Fatalf("%s: %d %s for %q / %q", rt.path, w.Code, w.Body, body, payment)
		}
	})
}

// checkRPC checks a JSON-RPC answer of the MCP or A2A door: an error is
// never JSON-RPC's internal error, and an MCP tool error never the
// answer kept for the server's own faults.
func checkRPC(t *testing.T, path string, answer, body []byte) {
	t.Helper()
	var msgs []json.RawMessage
	if bytes.HasPrefix(bytes.TrimSpace(answer), []byte("[")) {
		if err := json.Unmarshal(answer, &msgs); err != nil {
			t.Fatalf("%s: %q: %v", path, answer, err)
		}
	} else {
		msgs = []json.RawMessage{answer}
	}
	for _, m := range msgs {
		var resp struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(m, &resp); err != nil {
			t.Fatalf("%s: answer %q is not JSON-RPC: %v", path, m, err)
		}
		if resp.Error != nil && resp.Error.Code == -32603 {
			t.Fatalf("%s: internal error %s for %q", path, m, body)
		}
		if path == a2aPath && bytes.Contains(m, []byte("500 internal")) {
			t.Fatalf("%s: a task failed as internal: %s for %q", path, m, body)
		}
		if path == mcpPath && resp.Result.IsError {
			for _, c := range resp.Result.Content {
				if strings.Contains(c.Text, "is unavailable; try again later") || strings.Contains(c.Text, "internal") {
					t.Fatalf("%s: tool error %q for %q", path, c.Text, body)
				}
			}
		}
	}
}

// doorsServer returns the demo server's handler as newServer builds it,
// in memory, with the demo workers (session 2 not slowed).
func doorsServer(t testing.TB) http.Handler {
	cfg, err := parseFlags([]string{"-addr", "127.0.0.1:0", "-slow-session", "0s"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newServer(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.a2a != nil {
			s.a2a.Close()
		}
		s.state.close()
		s.obs.close()
	})
	return s.handler
}
