package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// pgstore does not import trustmcp; its answer store has the methods.
var _ trustmcp.AnswerStore = (*pgstore.AnswerStore)(nil)

func wantAnswer(t *testing.T, what string, s trustmcp.AnswerStore, key string, now time.Time, want string, wantOK bool) {
	t.Helper()
	got, ok, err := s.Answer(context.Background(), key, now)
	if err != nil {
		t.Fatalf("%s: Answer(%q) = %v", what, key, err)
	}
	if ok != wantOK || string(got) != want {
		t.Errorf("%s: Answer(%q) = %q, %v; want %q, %v", what, key, got, ok, want, wantOK)
	}
}

func TestAnswerStore(t *testing.T) {
	dbs := openDBs(t, 2)
	a, b := dbs[0].Answers(), dbs[1].Answers()
	ctx := context.Background()
	until := t0.Add(time.Hour)

	if err := a.Keep(ctx, "k", "0xa11ce", []byte(`{"square":49}`), until); err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, "kept", a, "k", t0, `{"square":49}`, true)
	wantAnswer(t, "from another server", b, "k", t0, `{"square":49}`, true)
	wantAnswer(t, "never kept", b, "other", t0, "", false)

	// The first answer is the one paid for: a second Keep changes nothing,
	// neither the answer nor its time.
	if err := b.Keep(ctx, "k", "0xa11ce", []byte(`{"square":64}`), until.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, "after a second Keep", a, "k", t0, `{"square":49}`, true)

	wantAnswer(t, "just before its time", b, "k", until.Add(-time.Microsecond), `{"square":49}`, true)
	wantAnswer(t, "at its time", b, "k", until, "", false)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.Keep(cctx, "d", "0xa11ce", []byte(`{}`), until); !errors.Is(err, context.Canceled) {
		t.Errorf("Keep with a done context = %v, want context.Canceled", err)
	}
	if _, _, err := a.Answer(cctx, "k", t0); !errors.Is(err, context.Canceled) {
		t.Errorf("Answer with a done context = %v, want context.Canceled", err)
	}
}

func TestAnswerStore_DeleteExpired(t *testing.T) {
	db := openDB(t)
	s := db.Answers()
	ctx := context.Background()
	for i, key := range []string{"a", "b", "c"} {
		if err := s.Keep(ctx, key, "0xa11ce", []byte(`"`+key+`"`), t0.Add(time.Duration(i+1)*time.Hour)); err != nil {
			t.Fatalf("Keep(%s) = %v", key, err)
		}
	}
	if n, err := s.DeleteExpired(ctx, t0.Add(2*time.Hour)); err != nil || n != 2 {
		t.Errorf("DeleteExpired(+2h) = %d, %v; want 2", n, err)
	}
	// Gone, not merely hidden: a new Keep of a deleted key is kept.
	if err := s.Keep(ctx, "a", "0xa11ce", []byte(`"a again"`), t0.Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, "kept again after the sweep", s, "a", t0, `"a again"`, true)
	wantAnswer(t, "not swept", s, "c", t0, `"c"`, true)

	// The DB's sweep covers the answers too.
	if n, err := db.DeleteExpired(ctx, t0.Add(10*time.Hour)); err != nil || n != 2 {
		t.Errorf("DB.DeleteExpired(+10h) = %d, %v; want the 2 answers left", n, err)
	}
	wantAnswer(t, "after the DB's sweep", s, "c", t0, "", false)
}

// countingFacilitator counts the settlements of an offline facilitator.
type countingFacilitator struct {
	evm.Facilitator
	settled atomic.Int32
}

func (f *countingFacilitator) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	f.settled.Add(1)
	return f.Facilitator.Settle(ctx, p, r)
}

type squareIn struct {
	N int `json:"n"`
}

type squareOut struct {
	Square int `json:"square"`
}

// TestAnswerStore_paidRetryAcrossServers runs two MCP servers, each with
// its own trustmcp.Paywall, sharing the replay and answer stores of one
// database and one facilitator. A paid call is served and settled by the
// first, whose result is lost; the retry with the same payment reaches
// the second, which delivers the kept result with the first settlement,
// without running the tool or settling again.
func TestAnswerStore_paidRetryAcrossServers(t *testing.T) {
	dbs := openDBs(t, 2)
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	fac := &countingFacilitator{}
	runs, sessions := squareServers(t, dbs, fac, offer)

	o := offer
	o.Network = "eip155:84532" // as the terms name it
	p := signedPayment(t, o)
	call := func(cs *mcp.ClientSession, n int) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
			Name: "square", Arguments: map[string]any{"n": n}, Meta: mcp.Meta{trustmcp.MetaPayment: p}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	want := paidAnswer(t, call(sessions[0], 7)) // then lost: the retry reaches the other server
	if want.Structured != `{"square":49}` {
		t.Fatalf("first result %s, want the square of 7", want.Structured)
	}
	if diff := cmp.Diff(want, paidAnswer(t, call(sessions[1], 7))); diff != "" {
		t.Errorf("the retry on the other server differs from the first result (-first +retry):\n%s", diff)
	}
	if n, s := runs.Load(), fac.settled.Load(); n != 1 || s != 1 {
		t.Errorf("the tool ran %d times and the facilitator settled %d times, want 1 and 1", n, s)
	}

	// The same payment for other arguments is refused on either server.
	for i, cs := range sessions {
		res := call(cs, 8)
		if !res.IsError || !strings.Contains(mcpText(res), "already used") {
			t.Errorf("server %d: square(8) with the payment of square(7) = %s, want already used", i, mcpText(res))
		}
	}
	if n, s := runs.Load(), fac.settled.Load(); n != 1 || s != 1 {
		t.Errorf("after the refused calls: %d runs and %d settlements, want 1 and 1", n, s)
	}
}

// mcpAnswer is what a client sees of a paid result.
type mcpAnswer struct {
	Structured string
	Text       string
	Settlement x402.SettleResponse
}

func paidAnswer(t *testing.T, res *mcp.CallToolResult) mcpAnswer {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", mcpText(res))
	}
	var a mcpAnswer
	b, _ := json.Marshal(res.StructuredContent)
	a.Structured, a.Text = string(b), mcpText(res)
	b, _ = json.Marshal(res.Meta[trustmcp.MetaPaymentResponse])
	if err := json.Unmarshal(b, &a.Settlement); err != nil || !a.Settlement.Success || a.Settlement.Transaction == "" {
		t.Fatalf("_meta[%q] = %s (%v), want a successful settlement", trustmcp.MetaPaymentResponse, b, err)
	}
	return a
}

func mcpText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// connectMCP serves s over in-memory transports and returns a client
// session on it, closed when the test ends.
func connectMCP(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// squareServers returns MCP sessions with one server on each of dbs,
// each serving the tool "square" at offer behind its own
// trustmcp.Paywall over fac and the database's replay and answer
// stores, and the count of the tool's runs on all of them. Server i
// reads the clock nows[i], when given.
func squareServers(t *testing.T, dbs []*pgstore.DB, fac x402.Facilitator, offer x402.PaymentRequirements, nows ...func() time.Time) (*atomic.Int32, []*mcp.ClientSession) {
	t.Helper()
	runs := new(atomic.Int32)
	sessions := make([]*mcp.ClientSession, len(dbs))
	for i, db := range dbs {
		var now func() time.Time
		if i < len(nows) {
			now = nows[i]
		}
		pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{
			Now:         now,
			Facilitator: fac,
			Prices:      map[string]x402.Price{"square": {Accepts: []x402.PaymentRequirements{offer}}},
			Replay:      db.Replay(),
			Answers:     db.Answers(),
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := mcp.NewServer(&mcp.Implementation{Name: "square", Version: "v0"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "square"}, func(_ context.Context, _ *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
			runs.Add(1)
			return nil, squareOut{Square: in.N * in.N}, nil
		})
		srv.AddReceivingMiddleware(pay)
		sessions[i] = connectMCP(t, srv)
	}
	return runs, sessions
}

// signedPayment returns a payment of offer (x402 version 2) signed by
// the test payer.
func signedPayment(t *testing.T, offer x402.PaymentRequirements) x402.PaymentPayload {
	t.Helper()
	payer, err := evm.NewPayer(testPayerKey)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := payer.Pay(context.Background(), offer)
	if err != nil {
		t.Fatal(err)
	}
	return x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: proof.Payload}
}
