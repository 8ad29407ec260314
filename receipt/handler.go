package receipt

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// The paths the Handler serves.
const (
	// ReceiptPath is the prefix of GET /api/v4/receipt/{receipt_id}.
	ReceiptPath = "/api/v4/receipt/"
	// VerifyPath is POST /api/v4/verify_receipt.
	VerifyPath = "/api/v4/verify_receipt"
)

// Handler serves the receipt endpoints of the trust service:
//
//	GET  /api/v4/receipt/{receipt_id}
//	POST /api/v4/verify_receipt
//
// GET answers 200 with the receipt exactly as issued (the signed bytes,
// application/json) when [Fetch] allows it: to its owner, and when shared
// to its counterparties. Without a caller identity it answers 401; for an
// unknown id, an expired receipt, or a receipt the caller may not see, the
// same 404 problem, so that existence is not leaked. A query parameter an
// endpoint does not define (only the log's consistency proof takes any:
// first and second) is a 400 naming it, rule "unknown", before the body
// is read.
//
// POST verify_receipt takes
//
//	{"receipt": {...}, "input": <any JSON>, "output": <any JSON>}
//
// where the receipt member holds the receipt object as any JSON library
// writes it, or a string holding its JSON (checked in its RFC 8785
// canonical form, as [Verifier.Verify] reads it), input and output are
// optional (absent: not checked; null is checked as the JSON null), and it
// answers 200 with the [VerifyResponse]:
//
//	{"valid": false, "as_issued": true, "receipt_id": "rcpt_...", "issuer": "ed25519:...",
//	 "signature_scheme": "ed25519-jcs", "expires_at": "2026-...Z",
//	 "checks": [{"name": "schema", "status": "passed"},
//	            {"name": "signature", "status": "failed", "code": "bad_signature", "detail": "..."},
//	            {"name": "input_hash", "status": "skipped", "detail": "no original given"}, ...]}
//
// A receipt that fails its checks is still a 200: the answer is the list
// of checks. A body that is not JSON of that shape, or has no receipt
// member, is a 400 problem. A receipt object is read as the receipt's
// text: a repeated member name or a lone UTF-16 surrogate escape inside
// it fails the schema check, as for the same text given as a string,
// while the same faults elsewhere in the body are 400 problems naming
// the member. Verification needs no caller identity: it
// reveals nothing that the holder of a receipt could not compute with the
// public keys.
//
// Errors are RFC 9457 application/problem+json bodies. The zero Handler
// answers 401 to every GET and 503 to every verify; set the fields before
// serving, and do not change them afterwards.
type Handler struct {
	// Store holds the receipts served by GET.
	Store Store
	// Verifier checks receipts for verify_receipt. Nil answers 503.
	Verifier *Verifier
	// Caller returns the identity of the integration making the request
	// (the Owner or a counterparty of Params), or an error when the
	// request carries none. Nil means no request has one, so every GET
	// answers 401.
	Caller func(*http.Request) (string, error)
	// Now returns the time used for expiry. Nil means time.Now.
	Now func() time.Time
	// MaxBodyBytes limits the verify_receipt body. Zero means 1 MiB.
	MaxBodyBytes int64
	// Logger records store failures. Nil is silent.
	Logger *slog.Logger
	// Log, when set, adds the transparency log's endpoints: GET
	// /api/v4/log, GET /api/v4/receipt/{receipt_id}/proof and GET
	// /api/v4/log/consistency?first=A&second=B (see [LogResponse],
	// [ProofResponse], [ConsistencyResponse]). They take a caller identity
	// like GET (401 without one); a receipt's proof is served to whoever
	// may fetch the receipt and is the same 404 for anyone else. Proofs
	// reveal hashes of other receipts, nothing more. Without a Log the
	// paths answer 404.
	Log *Log
}

// VerifyRequest is the body of POST /api/v4/verify_receipt.
type VerifyRequest struct {
	// Receipt is the receipt to check: the object in any JSON spelling,
	// or a string holding its JSON (see [Verifier.Verify]).
	Receipt json.RawMessage `json:"receipt"`
	// Input is the original input; absent means not checked.
	Input json.RawMessage `json:"input,omitempty"`
	// Output is the original output; absent means not checked.
	Output json.RawMessage `json:"output,omitempty"`
}

// VerifyResponse is the answer of POST /api/v4/verify_receipt.
type VerifyResponse struct {
	// Valid is true when no check failed.
	Valid bool `json:"valid"`
	// AsIssued is true when the receipt given was the bytes its issuer
	// signed, its RFC 8785 canonical form, and not another spelling of
	// them; false unless the signature check passed.
	AsIssued bool `json:"as_issued"`
	// ReceiptID is the receipt's id, when its schema is valid.
	ReceiptID string `json:"receipt_id,omitempty"`
	// Issuer is the key the signature was checked against.
	Issuer string `json:"issuer,omitempty"`
	// SignatureScheme is the receipt's signature scheme.
	SignatureScheme string `json:"signature_scheme,omitempty"`
	// ExpiresAt ends the receipt's retention, ISO 8601 UTC.
	ExpiresAt string `json:"expires_at,omitempty"`
	// Checks lists every check in order: schema, signature, key_window,
	// input_hash, output_hash, expiry.
	Checks []Check `json:"checks"`
}

// NewVerifyResponse turns a Result into the verify_receipt answer.
func NewVerifyResponse(res *Result) VerifyResponse {
	out := VerifyResponse{
		Valid:           res.Valid(),
		AsIssued:        res.AsIssued,
		ReceiptID:       res.ReceiptID,
		Issuer:          res.Issuer,
		SignatureScheme: res.Scheme,
		Checks:          res.Checks,
	}
	if !res.ExpiresAt.IsZero() {
		out.ExpiresAt = formatTimestamp(res.ExpiresAt)
	}
	return out
}

// ServeHTTP routes to the two endpoints and answers 404 or 405 problems
// for anything else.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == VerifyPath:
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r, http.MethodPost)
			return
		}
		h.verify(w, r)
	case h.Log != nil && (r.URL.Path == LogPath || r.URL.Path == ConsistencyPath ||
		strings.HasPrefix(r.URL.Path, ReceiptPath) && strings.HasSuffix(r.URL.Path, ProofSuffix)):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, r, "GET, HEAD")
			return
		}
		switch {
		case r.URL.Path == LogPath:
			if h.authenticated(w, r) {
				h.serveLog(w, r)
			}
		case r.URL.Path == ConsistencyPath:
			if h.authenticated(w, r) {
				h.serveConsistency(w, r)
			}
		default:
			h.serveProof(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, ReceiptPath), ProofSuffix))
		}
	case strings.HasPrefix(r.URL.Path, ReceiptPath):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, r, "GET, HEAD")
			return
		}
		h.get(w, r, strings.TrimPrefix(r.URL.Path, ReceiptPath))
	default:
		write(w, r, problem.New(http.StatusNotFound, problem.CodeNotFound, "no such endpoint"))
	}
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request, id string) {
	rec, ok := h.fetch(w, r, id)
	if !ok {
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Cache-Control", "private, no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(rec.Data)
	}
}

// fetch authenticates the caller and fetches the receipt id for it, or
// answers the problem (401, 404, 503) and reports false.
func (h *Handler) fetch(w http.ResponseWriter, r *http.Request, id string) (Record, bool) {
	var caller string
	var err error
	if h.Caller != nil {
		caller, err = h.Caller(r)
	}
	if h.Caller == nil || err != nil || caller == "" {
		write(w, r, problem.New(http.StatusUnauthorized, problem.CodeUnauthorized, "the request does not identify its caller"))
		return Record{}, false
	}
	if errs := unknownParameters(r); errs != nil {
		write(w, r, problem.Invalid(errs))
		return Record{}, false
	}
	if h.Store == nil {
		write(w, r, notFound())
		return Record{}, false
	}
	rec, err := Fetch(r.Context(), h.Store, id, caller, h.now())
	switch {
	case errors.Is(err, ErrNotFound):
		write(w, r, notFound())
		return Record{}, false
	case err != nil:
		if h.Logger != nil {
			h.Logger.ErrorContext(r.Context(), "receipt: lookup failed", "receipt_id", id, "err", err)
		}
		write(w, r, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the receipt store is unavailable"))
		return Record{}, false
	}
	return rec, true
}

// authenticated answers 401 and reports false when r names no caller.
func (h *Handler) authenticated(w http.ResponseWriter, r *http.Request) bool {
	if h.Caller != nil {
		if caller, err := h.Caller(r); err == nil && caller != "" {
			return true
		}
	}
	write(w, r, problem.New(http.StatusUnauthorized, problem.CodeUnauthorized, "the request does not identify its caller"))
	return false
}

// notFound is the one answer for every receipt the caller may not see.
func notFound() *problem.Details {
	return problem.New(http.StatusNotFound, problem.CodeNotFound, "no receipt with this id is available to the caller")
}

func (h *Handler) verify(w http.ResponseWriter, r *http.Request) {
	if errs := unknownParameters(r); errs != nil {
		write(w, r, problem.Invalid(errs))
		return
	}
	if h.Verifier == nil {
		write(w, r, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "receipt verification is not configured"))
		return
	}
	var req VerifyRequest
	body, err := jsonbody.Read(r.Body, h.MaxBodyBytes)
	if err == nil {
		err = decodeVerifyRequest(body, &req)
	}
	if err != nil {
		var p *problem.Details
		if !errors.As(err, &p) {
			p = problem.New(http.StatusBadRequest, problem.CodeMalformedJSON, err.Error())
		}
		write(w, r, p)
		return
	}
	if len(req.Receipt) == 0 || string(req.Receipt) == "null" {
		write(w, r, problem.Invalid([]FieldError{{Field: "receipt", Rule: "required", Message: "is required: the receipt object to verify"}}))
		return
	}
	if c := req.Receipt[0]; c != '{' && c != '"' { // encoding/json copies the value without the space before it
		write(w, r, problem.Invalid([]FieldError{{Field: "receipt", Rule: "type", Message: "must be the receipt object, or a string holding its JSON"}}))
		return
	}
	res, _ := h.Verifier.Verify(req.Receipt, Originals{Input: req.Input, Output: req.Output}, h.now())
	answer, err := json.Marshal(NewVerifyResponse(res))
	if err != nil { // every member is a string, bool or list of them
		write(w, r, problem.New(http.StatusInternalServerError, problem.CodeInternal, "encoding the answer failed"))
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(append(answer, '\n'))
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	write(w, r, problem.Newf(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed, "%s is not allowed here; use %s", r.Method, allow))
}

// write sends p with the request path as its instance and, served
// behind a pipeline that names each request (trust.NewHandler), the
// X-Request-Id it set on the response as its request_id.
func write(w http.ResponseWriter, r *http.Request, p *problem.Details) {
	q := *p
	q.Instance = r.URL.Path
	if q.RequestID == "" {
		q.RequestID = w.Header().Get("X-Request-Id")
	}
	problem.Write(w, &q)
}
