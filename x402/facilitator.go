package x402

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// Facilitator verifies and settles payments for a server. Verify answers
// whether p pays for r without moving funds; Settle moves them. A rejected
// payment is an answer (IsValid or Success false, with a reason) and a nil
// error; a non-nil error means no answer was obtained. r is the server's
// own offer, never the one the payer claims. Implementations must be safe
// for concurrent use and must not keep p or r.
type Facilitator interface {
	Verify(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (*VerifyResponse, error)
	Settle(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (*SettleResponse, error)
	Supported(ctx context.Context) (*SupportedResponse, error)
}

// facilitatorRequest is the body of POST /verify and POST /settle.
type facilitatorRequest struct {
	X402Version         int             `json:"x402Version"`
	PaymentPayload      PaymentPayload  `json:"paymentPayload"`
	PaymentRequirements json.RawMessage `json:"paymentRequirements"`
}

// newFacilitatorRequest builds the body in the shape of p's version. For
// version 1 the requirements carry the resource from p.Resource.
func newFacilitatorRequest(p *PaymentPayload, r PaymentRequirements) ([]byte, error) {
	var req any = r
	if p.X402Version == Version1 {
		var res ResourceInfo
		if p.Resource != nil {
			res = *p.Resource
		}
		req = r.V1(res)
	}
	rb, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(facilitatorRequest{X402Version: p.X402Version, PaymentPayload: *p, PaymentRequirements: rb})
}

// maxFacilitatorBody bounds what is read from a facilitator.
const maxFacilitatorBody = 1 << 20

// FacilitatorClient is a [Facilitator] reached over HTTP, at URL+"/verify",
// URL+"/settle" and URL+"/supported" (each appended to URL's path; a query
// string in URL, such as a key, is sent with each). It makes exactly one request per
// call: verify and settle are never retried automatically, since a repeated
// settle could be a second transfer. An answer with status 429 or 5xx is
// a [*FacilitatorError], never a result, even when its body reads as a
// refusal: the facilitator could not decide now, and the caller may ask
// again. Its zero value is not usable: URL is required. It is safe for
// concurrent use.
type FacilitatorClient struct {
	// URL is the facilitator's base URL, such as
	// "https://x402.org/facilitator".
	URL string
	// HTTPClient sends the requests; nil means http.DefaultClient. The
	// client sends through a copy that refuses a redirect to another
	// scheme or host: the request carries the payment proof and the
	// headers Prepare adds, and the answer must be the facilitator's.
	HTTPClient *http.Client
	// Prepare, if not nil, is called on every request before it is sent,
	// for instance to add an Authorization header.
	Prepare func(req *http.Request) error
}

// Verify asks the facilitator whether p pays for r.
func (c *FacilitatorClient) Verify(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (*VerifyResponse, error) {
	body, err := newFacilitatorRequest(p, r)
	if err != nil {
		return nil, &FacilitatorError{Op: "verify", Err: fmt.Errorf("encoding the request: %w", err)}
	}
	var out VerifyResponse
	if err := c.do(ctx, "verify", http.MethodPost, body, &out, "isValid"); err != nil {
		return nil, err
	}
	return &out, nil
}

// Settle asks the facilitator to settle p for r.
func (c *FacilitatorClient) Settle(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (*SettleResponse, error) {
	body, err := newFacilitatorRequest(p, r)
	if err != nil {
		return nil, &FacilitatorError{Op: "settle", Err: fmt.Errorf("encoding the request: %w", err)}
	}
	var out SettleResponse
	if err := c.do(ctx, "settle", http.MethodPost, body, &out, "success"); err != nil {
		return nil, err
	}
	return &out, nil
}

// Supported asks the facilitator what it supports.
func (c *FacilitatorClient) Supported(ctx context.Context) (*SupportedResponse, error) {
	var out SupportedResponse
	if err := c.do(ctx, "supported", http.MethodGet, nil, &out, "kinds"); err != nil {
		return nil, err
	}
	return &out, nil
}

// do sends one request and decodes the answer into out. An answer with a
// 4xx status other than 429 is still decoded when it carries the member
// that makes it a result (some facilitators answer an invalid payment
// with 400 and a verify result); a 429 or 5xx answer is an error.
func (c *FacilitatorClient) do(ctx context.Context, op, method string, body []byte, out any, member string) error {
	fail := func(status int, snippet []byte, err error) error {
		return &FacilitatorError{Op: op, StatusCode: status, Body: string(snippet), Err: err}
	}
	if c.URL == "" {
		return fail(0, nil, errors.New("FacilitatorClient.URL is empty"))
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	base, err := url.Parse(c.URL)
	if err != nil {
		return fail(0, nil, fmt.Errorf("FacilitatorClient.URL: %w", err))
	}
	req, err := http.NewRequestWithContext(ctx, method, base.JoinPath(op).String(), rd)
	if err != nil {
		return fail(0, nil, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Prepare != nil {
		if err := c.Prepare(req); err != nil {
			return fail(0, nil, fmt.Errorf("preparing the request: %w", err))
		}
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	// A redirect to another origin is refused: the request carries the
	// payment proof, and Prepare's headers.
	resp, err := httpapi.SameOrigin(hc).Do(req)
	if err != nil {
		return fail(0, nil, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxFacilitatorBody+1))
	if err != nil {
		return fail(resp.StatusCode, nil, fmt.Errorf("reading the answer: %w", err))
	}
	snippet := data[:min(len(data), 512)]
	if len(data) > maxFacilitatorBody {
		return fail(resp.StatusCode, snippet, fmt.Errorf("answer larger than %d bytes", maxFacilitatorBody))
	}
	var probe map[string]json.RawMessage
	// A 429 or 5xx says the facilitator could not decide now: never a
	// result, whatever its body, so that a refusal it answers with one
	// is asked again rather than kept as final.
	temporary := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
	isResult := !temporary && json.Unmarshal(data, &probe) == nil && probe[member] != nil
	if resp.StatusCode != http.StatusOK && !isResult {
		return fail(resp.StatusCode, snippet, errors.New(http.StatusText(resp.StatusCode)))
	}
	if !isResult {
		return fail(resp.StatusCode, snippet, fmt.Errorf("answer has no %q member", member))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fail(resp.StatusCode, snippet, fmt.Errorf("decoding the answer: %w", err))
	}
	return nil
}

// A FacilitatorHandlerOption configures [NewFacilitatorHandler].
type FacilitatorHandlerOption func(*facilitatorHandler)

// WithFacilitatorLogger sets where the handler logs the errors of its
// facilitator, at Error with the request id; by default they are not
// logged.
func WithFacilitatorLogger(l *slog.Logger) FacilitatorHandlerOption {
	return func(h *facilitatorHandler) {
		if l != nil {
			h.log = l
		}
	}
}

type facilitatorHandler struct {
	log *slog.Logger
}

// NewFacilitatorHandler serves f over HTTP with the facilitator API of the
// protocol: POST /verify, POST /settle and GET /supported, relative to
// where it is mounted (use http.StripPrefix under a prefix). Malformed
// requests get a 400 problem whose field errors name each member at fault
// by its JSON path from the body ("paymentRequirements.amount"); errors of f get a 502 problem with a fixed
// detail, the error itself going to the logger of
// [WithFacilitatorLogger] (it can name an upstream facilitator's URL when
// f is a [FacilitatorClient]); another method on those paths a 405
// problem and any other path a 404 problem. Each problem names the
// request by the X-Request-Id of the answer, set to a fresh id unless the
// server in front of the handler set one.
func NewFacilitatorHandler(f Facilitator, opts ...FacilitatorHandlerOption) http.Handler {
	h := &facilitatorHandler{log: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(h)
	}
	f = guard(f)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /supported", func(w http.ResponseWriter, r *http.Request) {
		out, err := f.Supported(r.Context())
		h.writeResult(w, r, "supported", out, err)
	})
	mux.HandleFunc("POST /verify", func(w http.ResponseWriter, r *http.Request) {
		p, req, err := readFacilitatorRequest(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		out, ferr := f.Verify(r.Context(), p, req)
		h.writeResult(w, r, "verify", out, ferr)
	})
	mux.HandleFunc("POST /settle", func(w http.ResponseWriter, r *http.Request) {
		p, req, err := readFacilitatorRequest(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		out, ferr := f.Settle(r.Context(), p, req)
		h.writeResult(w, r, "settle", out, ferr)
	})
	for path, allow := range map[string]string{"/supported": "GET, HEAD", "/verify": "POST", "/settle": "POST"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeProblem(w, r, problem.Newf(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
				"%s %s is not served; use %s", r.Method, r.URL.Path, allow))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, problem.Newf(http.StatusNotFound, problem.CodeNotFound,
			"no route %s: the facilitator serves POST /verify, POST /settle and GET /supported", r.URL.Path))
	})
	return httpapi.WithRequestID(mux)
}

// writeResult answers out, or the failure of the facilitator's op: the
// error goes to the log, the caller gets a fixed text and the request id.
func (h *facilitatorHandler) writeResult(w http.ResponseWriter, r *http.Request, op string, out any, err error) {
	if err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelError, "x402: facilitator "+op,
			slog.String("request_id", w.Header().Get(httpapi.HeaderRequestID)), slog.String("error", err.Error()))
		writeProblem(w, r, problem.Newf(http.StatusBadGateway, problem.CodeUnavailable, "the facilitator could not answer %s", op))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// readFacilitatorRequest decodes the body of POST /verify or /settle. The
// requirements of version 1 are converted to the shape of version 2, and
// their resource is put into the payload's Resource. A member of the
// requirements of the wrong type is named by its path from the body
// ("paymentRequirements.amount"), and requirements sent as null are
// refused as absent.
func readFacilitatorRequest(r *http.Request) (*PaymentPayload, PaymentRequirements, *problem.Details) {
	fail := func(err error) (*PaymentPayload, PaymentRequirements, *problem.Details) {
		var p *problem.Details
		if errors.As(err, &p) {
			return nil, PaymentRequirements{}, p
		}
		return nil, PaymentRequirements{}, problem.New(http.StatusBadRequest, problem.CodeMalformedJSON, err.Error())
	}
	body, err := jsonbody.Read(r.Body, maxFacilitatorBody)
	if err != nil {
		return fail(err)
	}
	var in facilitatorRequest
	if err := jsonbody.Unmarshal(body, &in); err != nil {
		return fail(err)
	}
	p := in.PaymentPayload
	var errs []problem.FieldError
	if p.X402Version != Version1 && p.X402Version != Version2 {
		errs = append(errs, problem.FieldError{Field: "paymentPayload.x402Version", Rule: "oneof", Message: "must be 1 or 2"})
	}
	if t := strings.TrimSpace(string(p.Payload)); t == "" || t[0] != '{' {
		// As a proof header's: no scheme's proof is anything else.
		errs = append(errs, problem.FieldError{Field: "paymentPayload.payload", Rule: "required", Message: "must be an object"})
	}
	if t := strings.TrimSpace(string(in.PaymentRequirements)); t == "" || t == "null" {
		errs = append(errs, problem.FieldError{Field: "paymentRequirements", Rule: "required", Message: "is required"})
	}
	if len(errs) > 0 {
		return nil, PaymentRequirements{}, problem.Invalid(errs)
	}
	// The requirements are decoded from the whole body, so that the
	// errors name their members from it.
	if p.X402Version == Version1 {
		var v1 struct {
			PaymentRequirements PaymentRequirementsV1 `json:"paymentRequirements"`
		}
		if err := jsonbody.Unmarshal(body, &v1); err != nil {
			return fail(err)
		}
		req := v1.PaymentRequirements
		p.Resource = &ResourceInfo{URL: req.Resource, Description: req.Description, MimeType: req.MimeType}
		return &p, req.V2(), nil
	}
	var v2 struct {
		PaymentRequirements PaymentRequirements `json:"paymentRequirements"`
	}
	if err := jsonbody.Unmarshal(body, &v2); err != nil {
		return fail(err)
	}
	return &p, v2.PaymentRequirements, nil
}
