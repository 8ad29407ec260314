package trustmcp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/trust"
)

// StoreReceipts is a [Receipts] on a receipt store in the same process,
// under the lookup rules of receipt.Fetch: a receipt is visible to its
// owner, and when shared to its counterparties, where the caller is
// trust.CallerFrom of the context (the tools set it from the bearer
// token). Set the fields before use; it is then safe for concurrent use.
type StoreReceipts struct {
	// Store holds the receipts. Nil finds none.
	Store receipt.Store
	// Verifier checks receipts for verify_receipt. Nil refuses to verify.
	Verifier *receipt.Verifier
	// Now returns the time of expiry checks; nil means time.Now.
	Now func() time.Time
}

// ErrNoVerifier is the error of verify_receipt on a [StoreReceipts]
// without a Verifier.
var ErrNoVerifier = errors.New("trustmcp: receipt verification is not configured")

func (s *StoreReceipts) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// FetchReceipt returns the receipt id, exactly as issued, when the caller
// named by ctx may see it, and an error wrapping receipt.ErrNotFound
// otherwise.
func (s *StoreReceipts) FetchReceipt(ctx context.Context, id string) (json.RawMessage, error) {
	if s.Store == nil {
		return nil, receipt.ErrNotFound
	}
	rec, err := receipt.Fetch(ctx, s.Store, id, trust.CallerFrom(ctx), s.now())
	if err != nil {
		return nil, err
	}
	return rec.Data, nil
}

// VerifyReceipt checks req.Receipt with the Verifier, and its hashes
// against req.Input and req.Output when given. A receipt that fails its
// checks is an answer with Valid false, not an error.
func (s *StoreReceipts) VerifyReceipt(_ context.Context, req *receipt.VerifyRequest) (*receipt.VerifyResponse, error) {
	if s.Verifier == nil {
		return nil, ErrNoVerifier
	}
	res, _ := s.Verifier.Verify(req.Receipt, receipt.Originals{Input: req.Input, Output: req.Output}, s.now())
	resp := receipt.NewVerifyResponse(res)
	return &resp, nil
}
