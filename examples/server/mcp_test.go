package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/agentcard"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// bearer adds an API key, and a traceparent when set, to every request.
type bearer struct {
	key, traceparent string
	base             http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	if b.traceparent != "" {
		r.Header.Set("traceparent", b.traceparent)
	}
	return b.base.RoundTrip(r)
}

// mcpSession connects an MCP client to endpoint with key (none when
// empty), closed when the test ends.
func mcpSession(t *testing.T, endpoint, key string) (*mcp.ClientSession, error) {
	t.Helper()
	return mcpSessionWith(t, endpoint, bearer{key: key})
}

// mcpSessionWith is mcpSession with the headers of b.
func mcpSessionWith(t *testing.T, endpoint string, b bearer) (*mcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport}
	if b.key != "" {
		b.base = http.DefaultTransport
		hc.Transport = b
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

// callTool calls a tool and fails the test on a protocol error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// structured decodes the structured content of a successful result.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", resultText(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

func resultText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func TestRun_mcp(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-integration", "acme=acme-key")
	demo, err := mcpSession(t, b.base+mcpPath, defaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}

	// The tools, named as the agent card's skills.
	tools, err := demo.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	skills := []string{"get_receipt", "verify_receipt", "report_outcome"} // the receipt tools and report_outcome are not A2A skills
	for _, s := range agentcard.Skills() {
		skills = append(skills, s.ID)
	}
	slices.Sort(names)
	slices.Sort(skills)
	if diff := cmp.Diff(skills, names); diff != "" {
		t.Errorf("tools vs the agent card's skills and the receipt tools (-want +tools):\n%s", diff)
	}
	// The card's description, which points agents to the tools (the
	// skills' by the skills' names), names each of the others.
	cardResp, err := http.Get(b.base + agentcard.WellKnownPath)
	if err != nil {
		t.Fatal(err)
	}
	var card agentcard.Card
	err = json.NewDecoder(cardResp.Body).Decode(&card)
	cardResp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if slices.ContainsFunc(card.Skills, func(s agentcard.Skill) bool { return s.ID == name }) {
			continue
		}
		if !strings.Contains(card.Description, name) {
			t.Errorf("the agent card's description does not name the tool %s: %s", name, card.Description)
		}
	}

	// The demo workers judge the arithmetic.
	for claim, want := range map[string]trust.Status{"17 * 3 = 51": trust.StatusValid, "17 * 3 = 50": trust.StatusInvalid} {
		var resp trust.Response
		structured(t, callTool(t, demo, "validate_claim", map[string]any{"input": "What is 17 * 3?", "claimed_result": claim}), &resp)
		if resp.Status != want || resp.Evidence.Redundancy != 3 {
			t.Errorf("validate_claim %q = %s on %d runs, want %s on 3", claim, resp.Status, resp.Evidence.Redundancy, want)
		}
	}

	// An inline receipt belongs to the key's integration: the tools fetch
	// and verify it, the HTTP route gives it to demo, and acme sees nothing.
	var resp trust.Response
	structured(t, callTool(t, demo, "validate_claim", map[string]any{"claimed_result": "17 * 3 = 51", "receipt": "inline"}), &resp)
	issued, err := receipt.Parse(resp.Receipt)
	if err != nil || issued.Signing == nil || issued.Signing.Issuer != b.issuer {
		t.Fatalf("inline receipt %s (%v): want one signed by %s", resp.Receipt, err, b.issuer)
	}
	var got trustmcp.ReceiptResult
	structured(t, callTool(t, demo, "get_receipt", map[string]any{"receipt_id": issued.ReceiptID}), &got)
	var vr receipt.VerifyResponse
	structured(t, callTool(t, demo, "verify_receipt", map[string]any{"receipt": got.Receipt}), &vr)
	if !vr.Valid || vr.Issuer != b.issuer {
		t.Errorf("verify_receipt = %+v, want valid, signed by %s", vr, b.issuer)
	}
	if fetched, err := trustClient(t, b.base, defaultAPIKey).FetchReceipt(context.Background(), issued.ReceiptID); err != nil || !jsonSame(fetched, resp.Receipt) {
		t.Errorf("GET /api/v4/receipt as demo = %s (%v), want the receipt issued over MCP", fetched, err)
	}
	acme, err := mcpSession(t, b.base+mcpMessagesPath, "acme-key")
	if err != nil {
		t.Fatal(err)
	}
	if res := callTool(t, acme, "get_receipt", map[string]any{"receipt_id": issued.ReceiptID}); !res.IsError || !strings.Contains(resultText(res), "no receipt") {
		t.Errorf("acme's get_receipt of demo's private receipt: %v %q, want the not-found tool error", res.IsError, resultText(res))
	}
	_, err = trustClient(t, b.base, "acme-key").FetchReceipt(context.Background(), issued.ReceiptID)
	wantNotFound(t, "acme over HTTP", err)

	// A W3C traceparent continues the caller's trace.
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	traced, err := mcpSessionWith(t, b.base+mcpPath, bearer{key: defaultAPIKey, traceparent: "00-" + traceID + "-00f067aa0ba902b7-01"})
	if err != nil {
		t.Fatal(err)
	}
	structured(t, callTool(t, traced, "validate_claim", map[string]any{"claimed_result": "17 * 3 = 51", "policy": "fast"}), &resp)
	if resp.TraceID != traceID {
		t.Errorf("trace_id %s, want the traceparent's %s", resp.TraceID, traceID)
	}

	// A bad argument is a tool error naming it.
	if res := callTool(t, demo, "validate_claim", map[string]any{"claimed_result": "17 * 3 = 51", "policy": "cheap"}); !res.IsError || !strings.Contains(resultText(res), "policy") {
		t.Errorf("policy cheap: %v %q, want a tool error naming policy", res.IsError, resultText(res))
	}
}

func TestRun_mcpRefusesWithoutKey(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t)
	for _, key := range []string{"", "wrong-key"} {
		if _, err := mcpSession(t, base+mcpPath, key); err == nil {
			t.Errorf("MCP session with key %q: connected, want refused", key)
		}
		req, _ := http.NewRequest(http.MethodPost, base+mcpMessagesPath,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"validate_claim","arguments":{"claimed_result":"17 * 3 = 51"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p trust.Error
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || err != nil || p.Code != "unauthorized" || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("tool call with key %q: %d %+v (%v), want a 401 problem with a Bearer challenge", key, resp.StatusCode, p, err)
		}
		if id := resp.Header.Get("X-Request-Id"); id == "" || p.RequestID != id || p.Instance != mcpMessagesPath {
			t.Errorf("tool call with key %q: X-Request-Id %q, problem %+v; want the id in both, and the path as instance", key, id, p)
		}
	}
}

// TestRun_mcpBadBody: a body that is not one JSON value, or is too large,
// is refused with the problem of the API's routes, naming the fault,
// where the SDK would answer in plain text.
func TestRun_mcpBadBody(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t)
	for _, c := range []struct {
		body   string
		status int
		code   problem.Code
		detail string
	}{
		{`{"jsonrpc":`, http.StatusBadRequest, "malformed_json", "the body ends before the value does"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"} {}`, http.StatusBadRequest, "malformed_json", "unexpected data after the JSON value at byte offset 47"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{},"params":{}}`, http.StatusBadRequest, "invalid_request", "params"},
		{`{"a":"` + strings.Repeat("x", mcpMaxBody) + `"}`, http.StatusRequestEntityTooLarge, "body_too_large", "larger than"},
	} {
		req, _ := http.NewRequest(http.MethodPost, base+mcpPath, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer demo-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p trust.Error
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		name := c.body[:min(len(c.body), 60)]
		if resp.StatusCode != c.status || err != nil || p.Code != c.code || !strings.Contains(p.Detail, c.detail) {
			t.Errorf("%s: %d %+v (%v), want %d %s naming %q", name, resp.StatusCode, p, err, c.status, c.code, c.detail)
		}
		if id := resp.Header.Get("X-Request-Id"); id == "" || p.RequestID != id {
			t.Errorf("%s: X-Request-Id %q, request_id %q; want the id in both", name, id, p.RequestID)
		}
	}
}

func TestRun_mcpPaid(t *testing.T) {
	t.Parallel()
	banner, log, _ := startServerBanner(t, "-mcp-paid", "-debug-addr", "127.0.0.1:0")
	base := banner.base
	cs, err := mcpSession(t, base+mcpPath, defaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	args := map[string]any{"claimed_result": "17 * 3 = 51"}

	// Without payment: the terms of the x402 MCP transport.
	res := callTool(t, cs, "validate_claim", args)
	terms, err := trustmcp.PaymentTerms(res)
	if err != nil || len(terms.Accepts) != 3 || terms.Accepts[0].Scheme != x402.SchemeExact || !strings.Contains(resultText(res), `"x402/error"`) {
		t.Fatalf("unpaid call: %v %q (%v), want the payment terms", res.IsError, resultText(res), err)
	}
	offer := terms.Accepts[0]
	if want, _ := evm.USDC(network, defaultPayTo, trustPrice); offer.Amount != want.Amount {
		t.Errorf("terms ask %s, want the trust price %s", offer.Amount, want.Amount)
	}

	// Paid, and the answer lost on the way: the connection drops after the
	// server answered. The retry with the same payment, on a new session,
	// gets the kept result and the first settlement; nothing runs or
	// settles again.
	payer, err := evm.NewPayer(strings.Repeat("47", 32))
	if err != nil {
		t.Fatal(err)
	}
	proof, err := payer.Pay(ctx, offer)
	if err != nil {
		t.Fatal(err)
	}
	payment := x402.PaymentPayload{X402Version: x402.Version2, Resource: terms.Resource, Accepted: offer, Payload: proof.Payload}
	paid := func(cs *mcp.ClientSession, args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim", Arguments: args, Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
	}
	drop := &dropAnswer{base: http.DefaultTransport, match: `"x402/payment"`}
	lossy, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: base + mcpPath, HTTPClient: &http.Client{Transport: bearer{key: defaultAPIKey, base: drop}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lossy.Close()
	if res, err := paid(lossy, args); err == nil {
		t.Fatalf("the call whose answer was dropped returned %v", res)
	}
	if !drop.dropped.Load() {
		t.Fatal("no answer was dropped")
	}
	var first trust.Response
	for i := range 2 {
		res, err := paid(cs, args)
		if err != nil {
			t.Fatal(err)
		}
		var resp trust.Response
		structured(t, res, &resp)
		var sr x402.SettleResponse
		b, _ := json.Marshal(res.Meta[trustmcp.MetaPaymentResponse])
		if resp.Status != trust.StatusValid || json.Unmarshal(b, &sr) != nil || !sr.Success || !strings.EqualFold(sr.Payer, payer.Address().String()) {
			t.Errorf("retry %d: %s, _meta %s, want VALID with the settlement", i+1, resp.Status, b)
		}
		if i == 0 {
			first = resp
		} else if diff := cmp.Diff(first, resp); diff != "" || resp.TraceID == "" {
			t.Errorf("retry %d differs from the first (a second run has another trace id and receipt) (-first +retry):\n%s", i+1, diff)
		}
	}
	// The same payment for other arguments: refused as already used.
	res, err = paid(cs, map[string]any{"claimed_result": "17 * 3 = 52"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(resultText(res), "already used") {
		t.Errorf("the same payment for other arguments: %v %q, want refused as already used", res.IsError, resultText(res))
	}
	if n := strings.Count(log.String(), `msg="trustmcp: settled"`); n != 1 {
		t.Errorf("%d settlements logged, want 1", n)
	}
	if n := strings.Count(log.String(), `msg="trustmcp: answer delivered again"`); n != 2 {
		t.Errorf("%d answers delivered again logged, want 2", n)
	}
	// The payments are counted under the x402 metrics, as transport mcp.
	fams := scrape(t, strings.TrimSuffix(banner.debug, "/debug/vars")+"/metrics")
	mcpSettled := labelled(fams["vouch_x402_payments_total"], map[string]string{"vouch_payment_transport": "mcp", "vouch_payment_step": "settle", "vouch_payment_result": "success"})
	if len(mcpSettled) != 1 || mcpSettled[0].GetCounter().GetValue() != 1 {
		t.Errorf("MCP settlements in /metrics = %v, want 1", mcpSettled)
	}
	for _, reason := range []string{"payment_required", "already_used"} {
		if refused := labelled(fams["vouch_x402_refusals_total"], map[string]string{"vouch_payment_transport": "mcp", "vouch_payment_reason": reason}); len(refused) != 1 || refused[0].GetCounter().GetValue() != 1 {
			t.Errorf("MCP refusals %s in /metrics = %v, want 1", reason, refused)
		}
	}
	// Receipts stay free.
	if res := callTool(t, cs, "get_receipt", map[string]any{"receipt_id": "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}); strings.Contains(resultText(res), "x402") {
		t.Errorf("get_receipt asked for payment: %q", resultText(res))
	}
}

func TestRun_agentCard(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t)
	for _, path := range agentcard.Paths() {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var card agentcard.Card
		err = json.NewDecoder(resp.Body).Decode(&card)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil || card.URL != base+a2aPath || len(card.Skills) != 4 || !strings.Contains(card.Description, base+mcpPath) {
			t.Errorf("GET %s: %d %+v (%v), want the card of %s with 4 skills", path, resp.StatusCode, card, err, base+a2aPath)
		}
	}
}

// TestRun_agentCardPublicURL: behind a proxy that terminates TLS, the
// server sees plain HTTP; with -public-url the card announces the
// address clients reach, so that an A2A client sends its key over
// https, not to the http:// of the request the proxy forwarded.
func TestRun_agentCardPublicURL(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t, "-public-url", "https://vouch.example/")
	resp, err := http.Get(base + agentcard.WellKnownPath)
	if err != nil {
		t.Fatal(err)
	}
	var card agentcard.Card
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	const want = "https://vouch.example" + a2aPath
	if err != nil || card.URL != want || len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != want ||
		!strings.Contains(card.Description, "https://vouch.example"+mcpPath) {
		t.Errorf("card %+v (%v), want it to announce %s", card, err, want)
	}
}

// TestRun_mcpStdio launches the test binary as the server in -mcp-stdio
// mode (see TestMain), as an MCP host would, and calls a tool: anything
// but MCP on stdout would break the session.
func TestRun_mcpStdio(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), stdioServerEnv+"=1")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 7 {
		t.Fatalf("tools over stdio: %v (%v), want 7", tools, err)
	}
	var resp trust.Response
	structured(t, callTool(t, cs, "validate_claim", map[string]any{"claimed_result": "17 * 3 = 50", "policy": "fast"}), &resp)
	if resp.Status != trust.StatusInvalid {
		t.Errorf("validate_claim over stdio = %s, want INVALID", resp.Status)
	}
}

// dropAnswer sends requests whose body contains match, then drops the
// first such answer, as a connection that breaks after the server
// answered.
type dropAnswer struct {
	base    http.RoundTripper
	match   string
	dropped atomic.Bool
}

func (d *dropAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil || d.dropped.Load() {
		return d.base.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := d.base.RoundTrip(r)
	if err != nil || !bytes.Contains(body, []byte(d.match)) || !d.dropped.CompareAndSwap(false, true) {
		return resp, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, errors.New("connection reset after the answer")
}

// jsonSame reports whether a and b are the same JSON value.
func jsonSame(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
}
