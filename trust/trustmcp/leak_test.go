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

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
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
