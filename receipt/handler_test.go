package receipt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// callerHeader carries the caller identity in these tests; a real host
// plugs its authenticator into Handler.Caller.
const callerHeader = "X-Test-Caller"

func headerCaller(r *http.Request) (string, error) {
	c := r.Header.Get(callerHeader)
	if c == "" {
		return "", errors.New("no caller")
	}
	return c, nil
}

type fixture struct {
	srv      *httptest.Server
	now      time.Time
	shared   *receipt.Issued
	private  *receipt.Issued
	unsigned []byte
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := newSigner(t, 1)
	is, store := newIssuer(t, s)
	f := &fixture{now: t0().Add(time.Hour)}
	f.shared = issue(t, is, fullParams())
	p := fullParams()
	p.Request.Visibility = receipt.VisibilityPrivate
	f.private = issue(t, is, p)
	unsignedIssuer, _ := newIssuer(t, nil)
	f.unsigned = issue(t, unsignedIssuer, fullParams()).JSON
	h := &receipt.Handler{
		Store:    store,
		Verifier: newVerifier(t, []receipt.PublicKey{s.Public()}),
		Caller:   headerCaller,
		Now:      func() time.Time { return f.now },
	}
	f.srv = httptest.NewServer(h)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) do(t *testing.T, method, path, caller, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if caller != "" {
		req.Header.Set(callerHeader, caller)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestHandler_get(t *testing.T) {
	f := newFixture(t)
	sharedID, privateID := f.shared.Receipt.ReceiptID, f.private.Receipt.ReceiptID
	tests := []struct {
		name   string
		id     string
		caller string
		later  bool // look up after the receipts expired
		status int
		body   []byte
	}{
		{"owner", sharedID, "owner-a", false, 200, f.shared.JSON},
		{"counterparty of shared", sharedID, "party-b", false, 200, f.shared.JSON},
		{"owner of private", privateID, "owner-a", false, 200, f.private.JSON},
		{"counterparty of private", privateID, "party-b", false, 404, nil},
		{"stranger", sharedID, "mallory", false, 404, nil},
		{"unknown id", receipt.NewID(), "owner-a", false, 404, nil},
		{"malformed id", "not-an-id", "owner-a", false, 404, nil},
		{"expired, owner", sharedID, "owner-a", true, 404, nil},
		{"expired, counterparty", sharedID, "party-b", true, 404, nil},
		{"no caller", sharedID, "", false, 401, nil},
	}
	var notFound []byte
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f.now = t0().Add(time.Hour)
			if tc.later {
				f.now = f.shared.ExpiresAt
			}
			resp, body := f.do(t, "GET", receipt.ReceiptPath+tc.id, tc.caller, "")
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == 200 {
				if !bytes.Equal(body, tc.body) || resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("body = %s (%s), want the issued bytes", body, resp.Header.Get("Content-Type"))
				}
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type = %q, want application/problem+json", ct)
			}
			if tc.status != 404 {
				return
			}
			// Every 404 is the same problem, apart from the path it names.
			var p receipt.Error
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			p.Instance = ""
			norm, _ := json.Marshal(p)
			if notFound == nil {
				notFound = norm
			} else if !bytes.Equal(norm, notFound) {
				t.Errorf("404 body %s differs from the first 404 %s", norm, notFound)
			}
		})
	}
}

func TestHandler_noCallerFunc(t *testing.T) {
	f := newFixture(t)
	h := &receipt.Handler{Store: &receipt.MemStore{}}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", receipt.ReceiptPath+f.shared.Receipt.ReceiptID, nil))
	if rec.Code != 401 {
		t.Errorf("GET without a Caller func = %d, want 401", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", receipt.VerifyPath, strings.NewReader(`{"receipt":{}}`)))
	if rec.Code != 503 {
		t.Errorf("verify without a Verifier = %d, want 503", rec.Code)
	}
}

func TestHandler_routes(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"POST", receipt.ReceiptPath + f.shared.Receipt.ReceiptID, 405, "GET, HEAD"},
		{"GET", receipt.VerifyPath, 405, "POST"},
		{"GET", "/api/v4/receipts", 404, ""},
		{"GET", "/", 404, ""},
	} {
		resp, body := f.do(t, tc.method, tc.path, "owner-a", "")
		if resp.StatusCode != tc.status || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s = %d (Allow %q), want %d (Allow %q); %s", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), tc.status, tc.allow, body)
		}
	}
	resp, body := f.do(t, "HEAD", receipt.ReceiptPath+f.shared.Receipt.ReceiptID, "owner-a", "")
	if resp.StatusCode != 200 || len(body) != 0 {
		t.Errorf("HEAD = %d with %d bytes, want 200 and no body", resp.StatusCode, len(body))
	}
}

func TestHandler_verify(t *testing.T) {
	f := newFixture(t)
	signed := string(f.shared.JSON)
	tampered := strings.Replace(signed, `"status":"VALID"`, `"status":"INVALID"`, 1)
	type check struct{ Name, Status, Code string }
	tests := []struct {
		name   string
		body   string
		valid  bool
		checks []check
	}{
		{"signed, with originals", `{"receipt":` + signed + `,"input":"What is the capital of France?","output":{"answer":"Paris"}}`, true,
			[]check{{"schema", "passed", ""}, {"signature", "passed", ""}, {"key_window", "passed", ""}, {"input_hash", "passed", ""}, {"output_hash", "passed", ""}, {"expiry", "passed", ""}}},
		{"signed, no originals", `{"receipt":` + signed + `}`, true,
			[]check{{"schema", "passed", ""}, {"signature", "passed", ""}, {"key_window", "passed", ""}, {"input_hash", "skipped", ""}, {"output_hash", "skipped", ""}, {"expiry", "passed", ""}}},
		{"tampered", `{"receipt":` + tampered + `}`, false,
			[]check{{"schema", "passed", ""}, {"signature", "failed", "bad_signature"}, {"key_window", "skipped", ""}, {"input_hash", "skipped", ""}, {"output_hash", "skipped", ""}, {"expiry", "passed", ""}}},
		{"wrong output", `{"receipt":` + signed + `,"output":{"answer":"Lyon"}}`, false,
			[]check{{"schema", "passed", ""}, {"signature", "passed", ""}, {"key_window", "passed", ""}, {"input_hash", "skipped", ""}, {"output_hash", "failed", "hash_mismatch"}, {"expiry", "passed", ""}}},
		{"null output is checked", `{"receipt":` + signed + `,"output":null}`, false,
			[]check{{"schema", "passed", ""}, {"signature", "passed", ""}, {"key_window", "passed", ""}, {"input_hash", "skipped", ""}, {"output_hash", "failed", "hash_mismatch"}, {"expiry", "passed", ""}}},
		{"unsigned", `{"receipt":` + string(f.unsigned) + `}`, false,
			[]check{{"schema", "passed", ""}, {"signature", "failed", "unsigned"}, {"key_window", "skipped", ""}, {"input_hash", "skipped", ""}, {"output_hash", "skipped", ""}, {"expiry", "passed", ""}}},
		{"not a receipt", `{"receipt":{"hello":"world"}}`, false,
			[]check{{"schema", "failed", "schema"}, {"signature", "skipped", ""}, {"key_window", "skipped", ""}, {"input_hash", "skipped", ""}, {"output_hash", "skipped", ""}, {"expiry", "skipped", ""}}},
		{"receipt is a string", `{"receipt":"rcpt_x"}`, false,
			[]check{{"schema", "failed", "schema"}, {"signature", "skipped", ""}, {"key_window", "skipped", ""}, {"input_hash", "skipped", ""}, {"output_hash", "skipped", ""}, {"expiry", "skipped", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, "POST", receipt.VerifyPath, "", tc.body)
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d, want 200; %s", resp.StatusCode, body)
			}
			var got struct {
				Valid  bool    `json:"valid"`
				Checks []check `json:"checks"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if got.Valid != tc.valid {
				t.Errorf("valid = %v, want %v; %s", got.Valid, tc.valid, body)
			}
			if diff := cmp.Diff(tc.checks, got.Checks); diff != "" {
				t.Errorf("checks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHandler_verify_fields(t *testing.T) {
	f := newFixture(t)
	_, body := f.do(t, "POST", receipt.VerifyPath, "", `{"receipt":`+string(f.shared.JSON)+`}`)
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"receipt_id":       f.shared.Receipt.ReceiptID,
		"issuer":           f.shared.Receipt.Signing.Issuer,
		"signature_scheme": "ed25519-jcs",
		"expires_at":       "2026-05-31T12:00:00.000Z",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestHandler_verify_badRequest(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"empty", ``, 400, ""},
		{"not JSON", `{"receipt":`, 400, ""},
		{"no receipt", `{"input":"x"}`, 400, "receipt"},
		{"null receipt", `{"receipt":null}`, 400, "receipt"},
		{"number receipt", `{"receipt":42}`, 400, "receipt"},
		{"array receipt", `{"receipt": []}`, 400, "receipt"},
		{"array body", `[]`, 400, ""},
		{"too large", `{"receipt":"` + strings.Repeat("x", 1<<20) + `"}`, 413, ""},
	} {
		resp, body := f.do(t, "POST", receipt.VerifyPath, "", tc.body)
		var p receipt.Error
		_ = json.Unmarshal(body, &p)
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: status %d (%s), want %d problem; %s", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, body)
		}
		if tc.field != "" && (len(p.Errors) != 1 || p.Errors[0].Field != tc.field) {
			t.Errorf("%s: field errors %+v, want one on %s", tc.name, p.Errors, tc.field)
		}
	}
}

// FuzzVerifyReceipt posts arbitrary bodies to the verify endpoint: it must
// answer 200 with a list of six checks, or a 4xx problem, and never
// accept a receipt the issuer did not sign as valid.
func FuzzVerifyReceipt(f *testing.F) {
	s := newSigner(f, 1)
	is, _ := newIssuer(f, s)
	signed := string(issue(f, is, fullParams()).JSON)
	f.Add(`{"receipt":` + signed + `}`)
	f.Add(`{"receipt":` + signed + `,"input":"What is the capital of France?","output":{"answer":"Paris"}}`)
	f.Add(`{"receipt":{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}}`)
	f.Add(`{"receipt":[],"input":null}`)
	f.Add(`{}`)
	h := &receipt.Handler{
		Verifier: newVerifier(f, []receipt.PublicKey{s.Public()}),
		Now:      t0,
	}
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", receipt.VerifyPath, strings.NewReader(body)))
		switch {
		case rec.Code == 200:
			var got receipt.VerifyResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got.Checks) != 6 {
				t.Fatalf("200 body %s: %v", rec.Body, err)
			}
			if got.Valid {
				var req struct{ Receipt json.RawMessage }
				_ = json.Unmarshal([]byte(body), &req)
				r, err := receipt.Parse(req.Receipt)
				if err != nil || r.Signing == nil || r.Signing.Issuer != s.Issuer() {
					t.Fatalf("accepted a receipt not from the trusted key: %s", req.Receipt)
				}
			}
		case rec.Code >= 400 && rec.Code < 500:
			if rec.Header().Get("Content-Type") != "application/problem+json" {
				t.Fatalf("status %d without a problem body", rec.Code)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	})
}
