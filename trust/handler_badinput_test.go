package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// countingStore counts the receipts put into a receipt.Store.
type countingStore struct {
	receipt.Store
	puts atomic.Int64
}

func (s *countingStore) Put(ctx context.Context, rec receipt.Record) error {
	s.puts.Add(1)
	return s.Store.Put(ctx, rec)
}

// badInputServer is a trust Handler over a real Service on an engine of
// recorded honest workers, issuing signed receipts into a counted store,
// with idempotent replay and the receipt endpoints. Callers: "k" is
// alice, "bob-key" is bob.
type badInputServer struct {
	*httptest.Server
	workers *routertest.Recorder
	store   *countingStore
	idem    *router.MemoryIdempotencyStore
}

func newBadInputServer(t *testing.T, now func() time.Time) *badInputServer {
	t.Helper()
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	s := &badInputServer{
		workers: routertest.NewRecorder(honest(0.9)),
		store:   &countingStore{Store: &receipt.MemStore{}},
		idem:    &router.MemoryIdempotencyStore{},
	}
	svc, err := trust.New(newEngine(t, s.workers, s.workers, s.workers),
		trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: s.store}), trust.WithSignedReceipts())
	if err != nil {
		t.Fatal(err)
	}
	h, err := trust.NewHandler(svc,
		trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "alice", "bob-key": "bob"})),
		trust.WithIdempotency(s.idem, 0),
		trust.WithReceiptEndpoints(s.store, v),
		trust.WithMaxBodyBytes(8192),
		trust.WithHandlerClock(now))
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// do sends one request and returns the status, Content-Type and body.
func (s *badInputServer) do(t *testing.T, method, path, key, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "key-"+path+"-"+body[:min(len(body), 40)])
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), raw
}

// checkProblem checks an answer against the wanted status, code and field.
func checkProblem(t *testing.T, name string, status int, ct string, raw []byte, wantStatus int, wantCode, wantField string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("%s: status %d (%s), want %d", name, status, raw, wantStatus)
		return
	}
	var p struct {
		Status int
		Code   string
		Errors []struct{ Field string }
	}
	if ct != "application/problem+json" || json.Unmarshal(raw, &p) != nil || p.Status != wantStatus || p.Code != wantCode {
		t.Errorf("%s: %s %s, want a %d problem with code %s", name, ct, raw, wantStatus, wantCode)
		return
	}
	if wantField != "" && (len(p.Errors) == 0 || p.Errors[0].Field != wantField) {
		t.Errorf("%s: field errors %+v, want %s", name, p.Errors, wantField)
	}
}

// TestHandler_badInput sends hostile envelopes to the trust call: each
// gets its documented problem, no worker runs, no receipt is stored and
// no idempotency entry is kept.
func TestHandler_badInput(t *testing.T) {
	s := newBadInputServer(t, time.Now)
	task := `"task":{"type":"summary","input":"Paris","claimed_result":"Paris is French."}`
	env := func(extra string) string { return `{"mode":"validation","policy":"safe",` + task + extra + `}` }
	huge := "1" + strings.Repeat("0", 400)
	cases := []struct {
		name, key, body string
		status          int
		code, field     string
	}{
		{"no credentials", "", env(""), 401, "unauthorized", ""},
		{"wrong credentials", "nope", env(""), 401, "unauthorized", ""},
		{"oversized", "k", env(`,"context":{"pad":"` + strings.Repeat("x", 9000) + `"}`), 413, "body_too_large", ""},
		{"deeply nested", "k", env(`,"metadata":{"d":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`), 400, "malformed_json", ""},
		{"invalid UTF-8", "k", env(`,"context":{"s":"` + "\xc3\x28" + `"}`), 400, "malformed_json", ""},
		{"duplicate mode", "k", `{"mode":"validation","mode":"delegation","policy":"safe",` + task + `}`, 400, "invalid_request", "mode"},
		{"duplicate in task", "k", `{"mode":"validation","policy":"safe","task":{"type":"a","type":"b","claimed_result":1}}`, 400, "invalid_request", "task.type"},
		{"mode as a number", "k", `{"mode":5,"policy":"safe",` + task + `}`, 400, "invalid_request", "mode"},
		{"unknown policy", "k", `{"mode":"validation","policy":"ultra",` + task + `}`, 400, "invalid_request", "policy"},
		{"context as an array", "k", env(`,"context":[1]`), 400, "invalid_request", "context"},
		{"receipt as a string", "k", env(`,"receipt":"inline"`), 400, "invalid_request", "receipt"},
		{"receipt ttl overflow", "k", env(`,"receipt":{"mode":"inline","ttl":"` + huge + `d"}`), 400, "invalid_request", "receipt.ttl"},
		{"receipt ttl negative", "k", env(`,"receipt":{"mode":"inline","ttl":"-7d"}`), 400, "invalid_request", "receipt.ttl"},
		{"receipt include as a number", "k", env(`,"receipt":{"mode":"inline","include":{"input_hash":1}}`), 400, "invalid_request", "receipt.include.input_hash"},
		{"unknown receipt mode", "k", env(`,"receipt":{"mode":"carbon"}`), 400, "invalid_request", "receipt.mode"},
		{"unknown agreement", "k", `{"mode":"delegation","policy":"safe","task":{"input":"Paris"},"delegation":{"agreement":"semantic"}}`, 400, "invalid_request", "delegation.agreement"},
		{"agreement as a number", "k", `{"mode":"delegation","policy":"safe","task":{"input":"Paris"},"delegation":{"agreement":1}}`, 400, "invalid_request", "delegation.agreement"},
		{"delegation options in validation", "k", env(`,"delegation":{"agreement":"judged"}`), 400, "invalid_request", "delegation"},
	}
	for _, c := range cases {
		status, ct, raw := s.do(t, http.MethodPost, trust.CallPath, c.key, c.body)
		checkProblem(t, c.name, status, ct, raw, c.status, c.code, c.field)
	}
	if n := s.workers.Calls.Load(); n != 0 {
		t.Errorf("bad envelopes ran %d jobs", n)
	}
	if n := s.store.puts.Load(); n != 0 {
		t.Errorf("bad envelopes stored %d receipts", n)
	}
	if n := s.idem.Len(); n != 0 {
		t.Errorf("bad envelopes left %d idempotency entries", n)
	}

	// A number beyond IEEE 754 double range is valid JSON, but RFC 8785
	// cannot hash it: asked for a receipt with hashes, it is a 400 naming
	// the member, before any work; without hashes, it is carried.
	for _, c := range []struct{ body, field string }{
		{`"task":{"type":"n","input":{"n":` + huge + `},"claimed_result":1},"receipt":{"mode":"inline","include":{"input_hash":true}}`, "task.input"},
		{`"task":{"type":"n","input":"x","claimed_result":[1e400]},"receipt":{"mode":"inline","include":{"output_hash":true}}`, "task.claimed_result"},
	} {
		status, ct, raw := s.do(t, http.MethodPost, trust.CallPath, "k", `{"mode":"validation","policy":"fast",`+c.body+`}`)
		checkProblem(t, "unhashable "+c.field, status, ct, raw, 400, "invalid_request", c.field)
	}
	if n := s.workers.Calls.Load(); n != 0 {
		t.Errorf("unhashable input ran %d jobs", n)
	}
	status, _, raw := s.do(t, http.MethodPost, trust.CallPath, "k",
		`{"mode":"validation","policy":"fast","task":{"type":"n","input":{"n":`+huge+`},"claimed_result":`+huge+`},"receipt":{"mode":"inline"}}`)
	if status != http.StatusOK {
		t.Errorf("huge numbers in a task whose receipt hashes nothing: status %d (%s), want 200", status, raw)
	}
}

// TestHandler_receiptBadAccess fetches receipts the caller may not have:
// another integration's private receipt and an expired one answer the
// same 404 as an unknown id, no credential is a 401, a malformed id a 404,
// and none of it changes the store: the owner still fetches the receipt.
func TestHandler_receiptBadAccess(t *testing.T) {
	now := time.Now()
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	s := newBadInputServer(t, func() time.Time { return *clock.Load() })
	status, _, raw := s.do(t, http.MethodPost, trust.CallPath, "k",
		`{"mode":"validation","policy":"fast","task":{"type":"summary","input":"Paris","claimed_result":"Paris is French."},"receipt":{"mode":"detached","ttl":"7d"}}`)
	if status != http.StatusOK {
		t.Fatalf("issuing a receipt: %d %s", status, raw)
	}
	var resp struct {
		Receipt struct {
			ReceiptID string `json:"receipt_id"`
			TTL       string `json:"ttl"`
		}
	}
	if err := json.Unmarshal(raw, &resp); err != nil || resp.Receipt.ReceiptID == "" {
		t.Fatalf("response %s carries no receipt id (%v)", raw, err)
	}
	id := resp.Receipt.ReceiptID
	path := receipt.ReceiptPath + id
	puts := s.store.puts.Load()

	for _, c := range []struct {
		name, key, path string
		status          int
		code            string
	}{
		{"another integration's private receipt", "bob-key", path, 404, "not_found"},
		{"no credentials", "", path, 401, "unauthorized"},
		{"wrong credentials", "nope", path, 401, "unauthorized"},
		{"unknown id", "k", receipt.ReceiptPath + "rcpt_AAAAAAAAAAAAAAAAAAAAAAAAAA", 404, "not_found"},
		{"malformed id", "k", receipt.ReceiptPath + "..%2f..%2fetc", 404, "not_found"},
	} {
		status, ct, raw := s.do(t, http.MethodGet, c.path, c.key, "")
		checkProblem(t, c.name, status, ct, raw, c.status, c.code, "")
	}
	// The owner, after all that, still gets it.
	if status, _, raw := s.do(t, http.MethodGet, path, "k", ""); status != http.StatusOK {
		t.Errorf("owner's fetch after the refusals: %d %s", status, raw)
	}
	// Past its TTL it is the same 404, to its owner too.
	later := now.Add(8 * 24 * time.Hour)
	clock.Store(&later)
	status, ct, raw := s.do(t, http.MethodGet, path, "k", "")
	checkProblem(t, "expired receipt", status, ct, raw, 404, "not_found", "")
	if n := s.store.puts.Load(); n != puts {
		t.Errorf("fetches stored %d receipts", n-puts)
	}
}

// TestHandler_verifyReceipt_problemsAlike: the verify_receipt route's
// problems carry request_id and instance like every other route's, and a
// receipt that is neither an object nor a string is a 400 naming receipt.
func TestHandler_verifyReceipt_problemsAlike(t *testing.T) {
	s := newBadInputServer(t, time.Now)
	for _, body := range []string{`{"receipt":42}`, `{"receipt":[]}`, `{"receipt":true}`, `{}`, `{"receipt":`} {
		status, ct, raw := s.do(t, http.MethodPost, "/api/v4/verify_receipt", "k", body)
		field := "receipt"
		if body == `{"receipt":` {
			field = ""
		}
		code := "invalid_request"
		if field == "" {
			code = "malformed_json"
		}
		checkProblem(t, body, status, ct, raw, http.StatusBadRequest, code, field)
		var p struct {
			RequestID string `json:"request_id"`
			Instance  string `json:"instance"`
		}
		if json.Unmarshal(raw, &p) != nil || p.RequestID == "" || p.Instance != "/api/v4/verify_receipt" {
			t.Errorf("%s: %s; want request_id and instance /api/v4/verify_receipt", body, raw)
		}
	}
}
