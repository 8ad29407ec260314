package trust_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// feedbackServer serves c over loopback to alice (key "ka") and bob
// (key "kb"), and returns a Client for each.
func feedbackServer(t *testing.T, c trust.Caller) (url string, alice, bob *trust.Client) {
	t.Helper()
	h, err := trust.NewHandler(c, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"ka": "alice", "kb": "bob"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	client := func(key string) *trust.Client {
		c, err := trust.NewClient(srv.URL, trust.WithAPIKey(key), trust.WithRetry(router.RetryPolicy{}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return srv.URL, client("ka"), client("kb")
}

// feedbackService is a trust service that signs receipts, over five
// honest sessions whose reputation book keeps its records in store.
func feedbackService(t *testing.T) (*trust.Service, *reputation.Memory) {
	t.Helper()
	priv, store, book := feedbackBook(t)
	w := honest(0.9)
	e, err := router.NewEngine(routertest.Sessions(1, 2, w, w, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e, trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	return s, store
}

// asProblem returns err's *trust.Error, failing unless it has status and
// code.
func asProblem(t *testing.T, err error, status int, code problem.Code) {
	t.Helper()
	var p *trust.Error
	if !errors.As(err, &p) || p.Status != status || p.Code != code {
		t.Fatalf("error %v, want a %d %s problem", err, status, code)
	}
}

// TestClient_Feedback: an outcome reported over POST /api/v4/feedback, by
// the trace_id of the call's response or by its receipt_id, teaches the
// book; a repeat adds nothing; another caller's report, and one on an id
// that names no call, are the same 404 and move nothing.
func TestClient_Feedback(t *testing.T) {
	s, store := feedbackService(t)
	_, alice, bob := feedbackServer(t, s)
	req := request(trust.ModeValidation, trust.PolicySafe)
	req.Receipt = receipt.Inline()
	resp, err := alice.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	r, keys := receiptSessions(t, resp)
	load := func() []reputation.Record { return reputationtest.Load(t, store, keys...) }
	before := load()
	ctx := context.Background()

	for name, report := range map[string]func() error{
		"bob by trace id":   func() error { return bob.Feedback(ctx, resp.TraceID, false) },
		"bob by receipt id": func() error { return bob.Feedback(ctx, r.ReceiptID, false) },
		"alice on no call":  func() error { return alice.Feedback(ctx, "0af7651916cd43dd8448eb211c80319c", false) },
		"alice on no receipt": func() error {
			return alice.Feedback(ctx, "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa", false)
		},
	} {
		err := report()
		if !errors.Is(err, trust.ErrUnknownCall) {
			t.Errorf("%s: %v, want ErrUnknownCall", name, err)
		}
		asProblem(t, err, http.StatusNotFound, problem.CodeUnknownCall)
		if diff := cmp.Diff(before, load()); diff != "" {
			t.Fatalf("%s moved the records (-before +after):\n%s", name, diff)
		}
	}

	if err := alice.Feedback(ctx, resp.TraceID, false); err != nil {
		t.Fatalf("alice's report by trace id: %v", err)
	}
	after := load()
	if cmp.Equal(before, after) {
		t.Fatalf("alice's report left the records as they were: %+v", after)
	}
	for name, id := range map[string]string{"trace id": resp.TraceID, "receipt id": r.ReceiptID} {
		if err := alice.Feedback(ctx, id, false); err != nil {
			t.Fatalf("alice's repeat by %s: %v", name, err)
		}
		if diff := cmp.Diff(after, load()); diff != "" {
			t.Errorf("alice's repeat by %s moved the records (-first +repeat):\n%s", name, diff)
		}
	}
}

// TestClient_FeedbackReceiptWithoutVotes: a report by the receipt_id of
// a receipt that does not record its votes (issued without the consensus
// snapshot, or without the router references) is a 404 that says why
// and what to send instead, to the receipt's owner only, in process and
// over HTTP; it moves nothing, and the same call reported by its
// trace_id teaches the book.
func TestClient_FeedbackReceiptWithoutVotes(t *testing.T) {
	s, store := feedbackService(t)
	_, alice, bob := feedbackServer(t, s)
	req := request(trust.ModeValidation, trust.PolicySafe)
	req.Receipt = receipt.Request{Mode: receipt.DeliveryInline}
	ctx := context.Background()
	resp, err := alice.Call(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	// A consensus snapshot without the router references names no session.
	req.Receipt.Include = receipt.Include{ConsensusSnapshot: true, PolicySnapshot: true}
	if snap, err := alice.Call(ctx, req); err != nil {
		t.Fatal(err)
	} else if r, err := receipt.Parse(snap.Receipt); err != nil || r.ConsensusSnapshot == nil {
		t.Fatalf("receipt %v with include.consensus_snapshot: %v", r, err)
	} else if err := s.Feedback(trust.WithCaller(ctx, "alice"), r.ReceiptID, false); !errors.Is(err, trust.ErrReceiptWithoutVotes) {
		t.Errorf("in process, a receipt with its consensus snapshot alone: %v, want ErrReceiptWithoutVotes", err)
	}
	keys := make([]reputation.Key, len(resp.Evidence.Steps[0].Sessions))
	for i, id := range resp.Evidence.Steps[0].Sessions {
		keys[i] = reputation.Key{Session: int64(id)}
	}
	before := reputationtest.Load(t, store, keys...)

	err = s.Feedback(trust.WithCaller(ctx, "alice"), r.ReceiptID, false)
	if !errors.Is(err, trust.ErrReceiptWithoutVotes) || !errors.Is(err, trust.ErrUnknownCall) {
		t.Errorf("in process: %v, want ErrReceiptWithoutVotes, an ErrUnknownCall", err)
	}
	for _, tt := range []struct {
		name   string
		c      *trust.Client
		detail string
	}{
		{"alice", alice, "the receipt does not record which sessions voted and which agreed: report the call by its trace_id, or ask for receipts with include.consensus_snapshot and include.router_trace_refs"},
		{"bob", bob, "no call of the caller's with that id is remembered"},
	} {
		err := tt.c.Feedback(ctx, r.ReceiptID, false)
		asProblem(t, err, http.StatusNotFound, problem.CodeUnknownCall)
		var p *trust.Error
		if !errors.As(err, &p) || p.Detail != tt.detail {
			t.Errorf("%s by receipt id: %v, want the detail %q", tt.name, err, tt.detail)
		}
	}
	if diff := cmp.Diff(before, reputationtest.Load(t, store, keys...)); diff != "" {
		t.Fatalf("the reports by receipt id moved the records (-before +after):\n%s", diff)
	}
	if err := alice.Feedback(ctx, resp.TraceID, false); err != nil {
		t.Fatalf("alice's report by trace id: %v", err)
	}
	if cmp.Equal(before, reputationtest.Load(t, store, keys...)) {
		t.Error("alice's report by trace id left the records as they were")
	}
}

// TestClient_FeedbackVerdict: a claim's true verdict reported over POST
// /api/v4/feedback teaches the votes of a call that answered RETRY; the
// route answers the report back; another caller's report is a 404 that
// moves nothing.
func TestClient_FeedbackVerdict(t *testing.T) {
	s, store := dissentService(t)
	url, alice, bob := feedbackServer(t, s)
	ctx := context.Background()
	resp, err := alice.Call(ctx, request(trust.ModeValidation, trust.PolicyOracle))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != trust.StatusRetry {
		t.Fatalf("status %s, want RETRY", resp.Status)
	}
	var keys []reputation.Key
	for _, st := range resp.Evidence.Steps {
		for _, id := range st.Sessions {
			keys = append(keys, reputation.Key{Session: int64(id)})
		}
	}
	load := func() []reputation.Record { return reputationtest.Load(t, store, keys...) }
	before := load()
	err = bob.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid)
	asProblem(t, err, http.StatusNotFound, problem.CodeUnknownCall)
	if diff := cmp.Diff(before, load()); diff != "" {
		t.Fatalf("bob's report moved the records (-before +after):\n%s", diff)
	}

	status, data := postFeedback(t, url, `{"trace_id": "`+resp.TraceID+`", "verdict": "INVALID"}`)
	if want := `{"trace_id":"` + resp.TraceID + `","verdict":"INVALID"}`; status != http.StatusOK || strings.TrimSpace(string(data)) != want {
		t.Fatalf("%d %s, want 200 %s", status, data, want)
	}
	after := load()
	for i, v := range resp.Evidence.Verdicts {
		moved := after[i].Wrong > before[i].Wrong
		if v == router.Label(router.VerdictInvalid) {
			moved = after[i].Right > before[i].Right
		}
		if !moved {
			t.Errorf("session %d voted %s: record %+v, before %+v", keys[i].Session, v, after[i], before[i])
		}
	}
	if err := alice.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid); err != nil {
		t.Fatalf("alice's repeat through the Client: %v", err)
	}
	if diff := cmp.Diff(after, load()); diff != "" {
		t.Errorf("the repeat moved the records (-first +repeat):\n%s", diff)
	}
	if err := alice.FeedbackVerdict(ctx, resp.TraceID, "UNSURE"); err == nil {
		t.Error("the verdict UNSURE was sent")
	}
}

// TestClient_FeedbackOwnKey: a report made with the context of the call
// it reports on, which names the call's Idempotency-Key
// (WithIdempotencyKey), is sent with a key of its own and recorded, as is
// a second report with that context.
func TestClient_FeedbackOwnKey(t *testing.T) {
	s, _ := feedbackService(t)
	_, alice, _ := feedbackServer(t, s)
	ctx := trust.WithIdempotencyKey(t.Context(), "order-42")
	resp, err := alice.Call(ctx, request(trust.ModeValidation, trust.PolicySafe))
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.Feedback(ctx, resp.TraceID, true); err != nil {
		t.Errorf("a report with the call's context: %v", err)
	}
	if err := alice.FeedbackVerdict(ctx, resp.TraceID, router.VerdictValid); err != nil {
		t.Errorf("a second report with the call's context: %v", err)
	}
	again, err := alice.Call(ctx, request(trust.ModeValidation, trust.PolicySafe))
	if err != nil || again.TraceID != resp.TraceID {
		t.Errorf("the call repeated with its key: trace id %v, %v; want %s, the first response", again, err, resp.TraceID)
	}
}

// TestHandler_feedback_reputationOff: a service that weighs no votes by
// reputation, and a Caller that takes no reports, answer an outcome and a
// verdict 409 reputation_off, which the Client returns as
// ErrReputationOff.
func TestHandler_feedback_reputationOff(t *testing.T) {
	s, err := trust.New(newEngine(t, honest(0.9), honest(0.9), honest(0.9)), trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]trust.Caller{"without reputation": s, "a bare Caller": callerFunc(s.Call)} {
		_, alice, _ := feedbackServer(t, c)
		for kind, err := range map[string]error{
			"outcome": alice.Feedback(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", true),
			"verdict": alice.FeedbackVerdict(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", router.VerdictValid),
		} {
			if !errors.Is(err, trust.ErrReputationOff) {
				t.Errorf("%s, %s: %v, want ErrReputationOff", name, kind, err)
			}
			asProblem(t, err, http.StatusConflict, problem.CodeReputationOff)
		}
	}
}

// callerFunc is a trust.Caller and nothing more.
type callerFunc func(ctx context.Context, req *trust.Request) (*trust.Response, error)

func (f callerFunc) Call(ctx context.Context, req *trust.Request) (*trust.Response, error) {
	return f(ctx, req)
}

// TestHandler_feedback_badBody: a report that names no call, names it
// twice, lacks right, gives both right and a verdict, has a verdict of
// another word, a member that is empty, a field of the wrong type or one
// the route does not know is a 400 naming the field; without a credential
// it is a 401.
func TestHandler_feedback_badBody(t *testing.T) {
	s, err := trust.New(newEngine(t, honest(0.9), honest(0.9), honest(0.9)))
	if err != nil {
		t.Fatal(err)
	}
	url, _, _ := feedbackServer(t, s)
	const trace = `"4bf92f3577b34da6a3ce929d0e0e4736"`
	for body, want := range map[string]string{
		`{"trace_id": ` + trace + `}`: "right",
		`{"right": true}`:             "trace_id",
		`{"trace_id": ` + trace + `, "receipt_id": "rcpt_a", "right": true}`: "trace_id",
		`{"receipt_id": 7, "right": true}`:                                   "receipt_id",
		`{"trace_id": ` + trace + `, "right": 1}`:                            "right",
		`{"trace_id": ` + trace + `, "right": true, "why": "x"}`:             "why",
		`{"trace_id": ` + trace + `, "right": true, "verdict": "VALID"}`:     "right",
		`{"trace_id": ` + trace + `, "verdict": "MAYBE"}`:                    "verdict",
		`{"trace_id": ` + trace + `, "verdict": 1}`:                          "verdict",
		`{"trace_id": ` + trace + `, "right": true, "verdict": ""}`:          "verdict",
		`{"trace_id": "", "receipt_id": "rcpt_a", "right": true}`:            "trace_id",
		`{"trace_id": ` + trace + `, "receipt_id": "", "right": false}`:      "receipt_id",
	} {
		status, data := postFeedback(t, url, body)
		if status != http.StatusBadRequest || !strings.Contains(string(data), `"field":"`+want+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %q", body, status, data, want)
		}
	}
	c, err := trust.NewClient(url, trust.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	asProblem(t, c.Feedback(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", true), http.StatusUnauthorized, problem.CodeUnauthorized)
}

// postFeedback posts body to the feedback route at url as alice (key
// "ka") and returns the answer's status and body.
func postFeedback(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+trust.FeedbackPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer ka")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// TestHandler_feedback_traceIDForm: a trace_id that is no W3C trace id
// (32 lowercase hex digits, not all zero), which no call can have run
// under, is a 400 naming trace_id, not the 404 of a call not found; a
// receipt id sent as a trace_id is one of them.
func TestHandler_feedback_traceIDForm(t *testing.T) {
	s, _ := feedbackService(t)
	url, alice, _ := feedbackServer(t, s)
	for _, id := range []string{
		"xyz",
		"4BF92F3577B34DA6A3CE929D0E0E4736",
		"4bf92f3577b34da6a3ce929d0e0e473",
		"4bf92f3577b34da6a3ce929d0e0e47360",
		"00000000000000000000000000000000",
		"rcpt_01jq3v9k2m8x7c4b6n5p0r1s2t",
	} {
		for _, report := range []string{`"right": true`, `"verdict": "VALID"`} {
			body := `{"trace_id": "` + id + `", ` + report + `}`
			status, data := postFeedback(t, url, body)
			if status != http.StatusBadRequest || !strings.Contains(string(data), `"field":"trace_id"`) {
				t.Errorf("%s: %d %s, want 400 naming trace_id", body, status, data)
			}
		}
	}
	var p *trust.Error
	if err := alice.Feedback(context.Background(), "xyz", true); !errors.As(err, &p) || p.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Field != "trace_id" {
		t.Errorf("Client.Feedback(xyz) = %v, want a 400 naming trace_id", err)
	}
}

// TestHandler_feedback_receiptIDForm: a receipt_id that is no receipt id
// ("rcpt_" and 26 lowercase base32 characters), which no receipt has, is
// a 400 naming receipt_id, not the 404 of a call not found; a trace id
// sent as a receipt_id is one of them, even one that names a call.
func TestHandler_feedback_receiptIDForm(t *testing.T) {
	s, _ := feedbackService(t)
	url, alice, _ := feedbackServer(t, s)
	resp, err := alice.Call(context.Background(), request(trust.ModeValidation, trust.PolicySafe))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{
		"xyz",
		resp.TraceID,
		"rcpt_",
		"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaa",
		"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"rcpt_AAAAAAAAAAAAAAAAAAAAAAAAAA",
		"rcpt_01jq3v9k2m8x7c4b6n5p0r1s2t",
	} {
		for _, report := range []string{`"right": true`, `"verdict": "VALID"`} {
			body := `{"receipt_id": "` + id + `", ` + report + `}`
			status, data := postFeedback(t, url, body)
			if status != http.StatusBadRequest || !strings.Contains(string(data), `"field":"receipt_id"`) {
				t.Errorf("%s: %d %s, want 400 naming receipt_id", body, status, data)
			}
		}
	}
	var p *trust.Error
	if err := alice.Feedback(context.Background(), "rcpt_x", true); !errors.As(err, &p) || p.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Field != "receipt_id" {
		t.Errorf("Client.Feedback(rcpt_x) = %v, want a 400 naming receipt_id", err)
	}
}

// receiptSessions returns the receipt inline in resp and the reputation
// keys of the sessions it names.
func receiptSessions(t *testing.T, resp *trust.Response) (*receipt.Receipt, []reputation.Key) {
	t.Helper()
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]reputation.Key, len(r.CortensorRefs.Sessions))
	for i, id := range r.CortensorRefs.Sessions {
		keys[i] = reputation.Key{Session: id}
	}
	return r, keys
}
