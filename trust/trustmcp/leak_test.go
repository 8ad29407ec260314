package trustmcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// secret is what an internal error may carry: a database's host, user
// and name, as a PostgreSQL driver writes them.
const secret = `failed to connect to host=db.internal user=vouch database=receipts: password authentication failed`

var errInternal = errors.New(secret)

// failing answers every call with errInternal.
type failing struct{ router.Service }

func (failing) Call(context.Context, *trust.Request) (*trust.Response, error) {
	return nil, errInternal
}
func (failing) Factcheck(context.Context, *router.FactcheckRequest) (*router.FactcheckResponse, error) {
	return nil, errInternal
}
func (failing) FetchReceipt(context.Context, string) (json.RawMessage, error) {
	return nil, errInternal
}
func (failing) VerifyReceipt(context.Context, *receipt.VerifyRequest) (*receipt.VerifyResponse, error) {
	return nil, errInternal
}

// logBuffer is a log destination safe for concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// An internal error (the receipt store's, the trust service's, the
// router's, the verifier's) never reaches the caller: every tool answers
// a tool error that says what is unavailable, and the server's log keeps
// the error.
func TestServer_internalErrorsNotReturned(t *testing.T) {
	var log logBuffer
	cs := newSession(t, trustmcp.Config{Caller: failing{}, Router: failing{}, Receipts: failing{},
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"validate_claim", map[string]any{"claimed_result": "17 * 3 = 51"}, "validate_claim: the trust service is unavailable"},
		{"delegate_task", map[string]any{"objective": "17 * 3"}, "delegate_task: the trust service is unavailable"},
		{"arbitrate", map[string]any{"claimed_result": "51", "dispute_context": "wrong"}, "arbitrate: the trust service is unavailable"},
		{"factcheck", map[string]any{"claim": "17 * 3 = 51"}, "factcheck: the router is unavailable"},
		{"get_receipt", map[string]any{"receipt_id": "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}, "get_receipt: the receipt store is unavailable"},
		{"verify_receipt", map[string]any{"receipt": map[string]any{"receipt_id": "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}}, "verify_receipt: receipt verification is unavailable"},
	} {
		res := callTool(t, cs, c.tool, c.args)
		got := text(res)
		if !res.IsError || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %v %q, want a tool error starting %q", c.tool, res.IsError, got, c.want)
		}
		if strings.Contains(got, "db.internal") || strings.Contains(got, "password") {
			t.Errorf("%s: the caller sees the internal error: %q", c.tool, got)
		}
	}
	if n := strings.Count(log.String(), "db.internal"); n != 6 {
		t.Errorf("the log has the internal error %d times, want once per tool (6):\n%s", n, log.String())
	}
}

// A problem of the trust service is its answer to the caller: its detail
// reaches the caller as it is, as on the HTTP routes.
func TestServer_problemReturned(t *testing.T) {
	f := newFixture(t)
	cs := newSession(t, trustmcp.Config{Caller: f.svc, Receipts: &trustmcp.StoreReceipts{Store: f.store}})
	res := callTool(t, cs, "verify_receipt", map[string]any{"receipt": map[string]any{"receipt_id": "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}})
	if want := "receipt verification is not configured"; !res.IsError || !strings.Contains(text(res), want) {
		t.Errorf("verify_receipt without a verifier: %v %q, want a tool error saying %q", res.IsError, text(res), want)
	}
}

// settlingFails is a facilitator that verifies every payment and fails
// every settlement with an internal error.
type settlingFails struct{ scriptedFacilitator }

func (settlingFails) Settle(context.Context, *x402.PaymentPayload, x402.PaymentRequirements) (*x402.SettleResponse, error) {
	return nil, errors.New("POST https://facilitator.internal/settle?api_key=s3cr3t: connection reset")
}

// A facilitator's error is logged, and the payer is told that the
// settlement failed, not the facilitator's address or key.
func TestPaywall_settleErrorNotReturned(t *testing.T) {
	f := newFixture(t)
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	var log logBuffer
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{
		Facilitator: &settlingFails{scriptedFacilitator{verify: &x402.VerifyResponse{IsValid: true}}},
		Prices:      map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}}},
		Logger:      slog.New(slog.NewTextHandler(&log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.AddReceivingMiddleware(pay)
	payment := x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: json.RawMessage(`{"signature":"0x00"}`)}
	payment.Accepted.Network = "eip155:84532"
	res, err := connect(t, s).CallTool(context.Background(), &mcp.CallToolParams{Name: "validate_claim",
		Arguments: map[string]any{"claimed_result": "17 * 3 = 51"}, Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
	if err != nil {
		t.Fatal(err)
	}
	pr := paidTerms(t, res)
	if pr.Settlement == nil || pr.Settlement.Success || pr.Settlement.ErrorReason != "unexpected_settle_error" {
		t.Errorf("settlement in the terms: %+v, want the failure with reason unexpected_settle_error", pr.Settlement)
	}
	if strings.Contains(text(res), "facilitator.internal") || strings.Contains(text(res), "s3cr3t") {
		t.Errorf("the payer sees the facilitator's error: %q", text(res))
	}
	if !strings.Contains(log.String(), "facilitator.internal") {
		t.Errorf("the log lacks the facilitator's error:\n%s", log.String())
	}
}
