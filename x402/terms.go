package x402

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// maxTermsBody bounds the 402 body read for version 1 terms.
const maxTermsBody = 1 << 20

// errNoTerms: a 402 answer that is not an x402 answer at all.
var errNoTerms = fmt.Errorf("%w: the answer carries neither a %s header nor x402 terms in its body", ErrInvalidTerms, HeaderPaymentRequired)

// ReadPaymentRequired returns the terms of a 402 answer: the
// PAYMENT-REQUIRED header when present (version 2), or else the JSON body
// (version 1, or version 2 from servers that put it there). Version 1 terms
// come back in the shape of version 2 with X402Version 1, their resource
// taken from the first offer. ReadPaymentRequired may read the body; it
// leaves resp.Body readable from the start. Errors wrap ErrInvalidTerms.
func ReadPaymentRequired(resp *http.Response) (*PaymentRequired, error) {
	if v := resp.Header.Get(HeaderPaymentRequired); v != "" {
		pr, err := DecodePaymentRequired(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %s header: %w", ErrInvalidTerms, HeaderPaymentRequired, err)
		}
		return pr, nil
	}
	if resp.Body == nil {
		return nil, errNoTerms
	}
	orig := resp.Body
	body, err := io.ReadAll(io.LimitReader(orig, maxTermsBody+1))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), orig), orig}
	if err != nil {
		return nil, fmt.Errorf("%w: reading the body: %w", ErrInvalidTerms, err)
	}
	return parseTermsBody(body)
}

// parseTermsBody reads terms from the JSON body of a 402 answer.
func parseTermsBody(body []byte) (*PaymentRequired, error) {
	var probe struct {
		X402Version int `json:"x402Version"`
	}
	if len(body) > maxTermsBody || json.Unmarshal(body, &probe) != nil || probe.X402Version == 0 {
		return nil, errNoTerms
	}
	switch probe.X402Version {
	case Version1:
		v1, err := DecodePaymentRequiredV1(body)
		if err != nil {
			return nil, err
		}
		pr := &PaymentRequired{X402Version: Version1, Error: v1.Error, Accepts: make([]PaymentRequirements, len(v1.Accepts))}
		for i, a := range v1.Accepts {
			pr.Accepts[i] = a.V2()
		}
		if len(v1.Accepts) > 0 {
			a := v1.Accepts[0]
			pr.Resource = &ResourceInfo{URL: a.Resource, Description: a.Description, MimeType: a.MimeType}
		}
		return pr, nil
	case Version2:
		var pr PaymentRequired
		if err := jsonbody.Unmarshal(body, &pr); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidTerms, err)
		}
		if errs := checkOffers(nil, "accepts", pr.Accepts); len(errs) > 0 {
			return nil, fmt.Errorf("%w: %w", ErrInvalidTerms, problem.Invalid(errs))
		}
		return &pr, nil
	default:
		return nil, fmt.Errorf("%w: %w %d", ErrInvalidTerms, ErrUnsupportedVersion, probe.X402Version)
	}
}
