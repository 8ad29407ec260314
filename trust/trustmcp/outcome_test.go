package trustmcp_test

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// callOnly is a trust.Caller that takes no reports.
type callOnly struct{ c trust.Caller }

func (c callOnly) Call(ctx context.Context, req *trust.Request) (*trust.Response, error) {
	return c.c.Call(ctx, req)
}

// bearer sends "Authorization: Bearer <key>" on every request.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// reputationEngine is an engine of five sessions that answer VALID,
// whose reputation book keeps its records in store.
func reputationEngine(t *testing.T) (*router.Engine, *reputation.Memory) {
	t.Helper()
	store := new(reputation.Memory)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := routertest.Verdict(router.VerdictValid)
	e, err := router.NewEngine(routertest.Sessions(1, 2, w, w, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	return e, store
}

// TestReportOutcome: report_outcome, called through the Go MCP SDK's
// client over Streamable HTTP behind bearer tokens, teaches the book as
// trust.Service.Feedback does for the token's caller; a repeat adds
// nothing; another caller's report on the call, and one on an id that
// names no call, are tool errors that move nothing; bad arguments are
// tool errors naming the argument. A validation's true verdict is the
// same report as the outcome it implies.
func TestReportOutcome(t *testing.T) {
	e, store := reputationEngine(t)
	svc, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(trustmcp.Config{Caller: svc})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		if token != "alice" && token != "bob" {
			return nil, mcpauth.ErrInvalidToken
		}
		return &mcpauth.TokenInfo{UserID: "key:" + token}, nil
	}
	h := mcpauth.RequireBearerToken(verify, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	session := func(key string) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{key}}, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	alice, bob := session("alice"), session("bob")

	res := callTool(t, alice, trustmcp.ToolValidateClaim, map[string]any{"input": "2+2", "claimed_result": "4"})
	if res.IsError {
		t.Fatalf("validate_claim: %s", text(res))
	}
	var answer trust.Response
	decode(t, res, &answer)
	keys := make([]reputation.Key, 5)
	for i := range keys {
		keys[i] = reputation.Key{Session: int64(i + 1)}
	}
	load := func() []reputation.Record {
		t.Helper()
		recs, err := store.Load(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	before := load()

	for name, c := range map[string]struct {
		cs   *mcp.ClientSession
		args map[string]any
		want string
	}{
		"bob on alice's call":      {bob, map[string]any{"trace_id": answer.TraceID, "right": false}, "unknown_call"},
		"alice on no call":         {alice, map[string]any{"trace_id": "0af7651916cd43dd8448eb211c80319c", "right": false}, "unknown_call"},
		"no id":                    {alice, map[string]any{"right": false}, "argument trace_id"},
		"two ids":                  {alice, map[string]any{"trace_id": answer.TraceID, "receipt_id": "rcpt_a", "right": false}, "argument receipt_id"},
		"no right":                 {alice, map[string]any{"trace_id": answer.TraceID}, "right"},
		"right that is no bool":    {alice, map[string]any{"trace_id": answer.TraceID, "right": "yes"}, "right"},
		"an argument it does not":  {alice, map[string]any{"trace_id": answer.TraceID, "right": true, "why": "x"}, "why"},
		"right and a verdict":      {alice, map[string]any{"trace_id": answer.TraceID, "right": true, "verdict": "VALID"}, "argument verdict"},
		"a verdict of no word":     {alice, map[string]any{"trace_id": answer.TraceID, "verdict": "MAYBE"}, "argument verdict"},
		"bob's verdict":            {bob, map[string]any{"trace_id": answer.TraceID, "verdict": "INVALID"}, "unknown_call"},
		"an empty verdict":         {alice, map[string]any{"trace_id": answer.TraceID, "right": true, "verdict": ""}, "argument verdict"},
		"an empty trace_id":        {alice, map[string]any{"trace_id": "", "receipt_id": "rcpt_a", "right": false}, "argument trace_id"},
		"no trace id":              {alice, map[string]any{"trace_id": "xyz", "right": false}, "argument trace_id"},
		"an uppercase trace id":    {alice, map[string]any{"trace_id": strings.ToUpper(answer.TraceID), "verdict": "INVALID"}, "argument trace_id"},
		"a trace id too short":     {alice, map[string]any{"trace_id": answer.TraceID[1:], "right": false}, "argument trace_id"},
		"no receipt id":            {alice, map[string]any{"receipt_id": "xyz", "right": false}, "argument receipt_id"},
		"a receipt id too short":   {alice, map[string]any{"receipt_id": "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaa", "verdict": "INVALID"}, "argument receipt_id"},
		"a trace id as receipt_id": {alice, map[string]any{"receipt_id": answer.TraceID, "right": false}, "argument receipt_id"},
	} {
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: trustmcp.ToolReportOutcome, Arguments: c.args})
		msg := ""
		switch {
		case err != nil:
			msg = err.Error()
		case res.IsError:
			msg = text(res)
		default:
			t.Errorf("%s: answered %s, want an error naming %q", name, text(res), c.want)
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q, want it to name %q", name, msg, c.want)
		}
		if diff := cmp.Diff(before, load()); diff != "" {
			t.Fatalf("%s moved the records (-before +after):\n%s", name, diff)
		}
	}

	report := func() {
		t.Helper()
		res := callTool(t, alice, trustmcp.ToolReportOutcome, map[string]any{"trace_id": answer.TraceID, "right": false})
		if res.IsError {
			t.Fatalf("alice's report: %s", text(res))
		}
		var got trustmcp.OutcomeResult
		decode(t, res, &got)
		if diff := cmp.Diff(trustmcp.OutcomeResult{ID: answer.TraceID, Right: new(false)}, got); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
	}
	report()
	after := load()
	if cmp.Equal(before, after) {
		t.Fatalf("alice's report left the records as they were: %+v", after)
	}
	report()
	if diff := cmp.Diff(after, load()); diff != "" {
		t.Errorf("alice's repeat moved the records (-first +repeat):\n%s", diff)
	}

	// The claim's true verdict: INVALID is the report already made on
	// an answer of VALID, and VALID replaces it.
	verdict := func(v string) {
		t.Helper()
		res := callTool(t, alice, trustmcp.ToolReportOutcome, map[string]any{"trace_id": answer.TraceID, "verdict": v})
		if res.IsError {
			t.Fatalf("alice's verdict %s: %s", v, text(res))
		}
		var got trustmcp.OutcomeResult
		decode(t, res, &got)
		if diff := cmp.Diff(trustmcp.OutcomeResult{ID: answer.TraceID, Verdict: v}, got); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
	}
	verdict("INVALID")
	if diff := cmp.Diff(after, load()); diff != "" {
		t.Errorf("the verdict INVALID on an answer of VALID counted again (-first +verdict):\n%s", diff)
	}
	verdict("VALID")
	if cmp.Equal(after, load()) {
		t.Error("the verdict VALID did not replace the report of a wrong answer")
	}
}

// TestReportOutcome_reputationOff: a service that weighs no votes by
// reputation answers report_outcome with a tool error saying so.
func TestReportOutcome_reputationOff(t *testing.T) {
	f := newFixture(t)
	svc, err := trust.New(f.engine, trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	res := callTool(t, newSession(t, trustmcp.Config{Caller: svc}), trustmcp.ToolReportOutcome,
		map[string]any{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "right": true})
	if !res.IsError || !strings.Contains(text(res), "reputation_off") {
		t.Errorf("report_outcome without reputation: isError %v, %q; want a tool error naming reputation_off", res.IsError, text(res))
	}
}

// TestReportOutcome_receiptWithoutVotes: a report by the receipt_id of a
// receipt that does not record its votes is a tool error naming
// receipt_id and saying to give the call's trace_id, which then lands.
func TestReportOutcome_receiptWithoutVotes(t *testing.T) {
	e, _ := reputationEngine(t)
	_, priv, _ := ed25519.GenerateKey(nil)
	svc, err := trust.New(e, trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Call(context.Background(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe,
		Task: trust.Task{ClaimedResult: trust.JSON("4")}, Receipt: receipt.Request{Mode: receipt.DeliveryInline}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	cs := newSession(t, trustmcp.Config{Caller: svc})
	res := callTool(t, cs, trustmcp.ToolReportOutcome, map[string]any{"receipt_id": r.ReceiptID, "right": true})
	if msg := text(res); !res.IsError || !strings.Contains(msg, "receipt_id") || !strings.Contains(msg, "which sessions voted") || !strings.Contains(msg, "trace_id") {
		t.Errorf("by receipt id: isError %v, %q; want a tool error naming receipt_id, the snapshot and trace_id", res.IsError, msg)
	}
	if res := callTool(t, cs, trustmcp.ToolReportOutcome, map[string]any{"trace_id": resp.TraceID, "right": true}); res.IsError {
		t.Errorf("by trace id: %s", text(res))
	}
}
