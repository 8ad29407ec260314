package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"time"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// escrowBalancePath serves the offline escrow's balances (GET): demo
// only, for a buyer to see its hold given back after a void.
const escrowBalancePath = "/x402/escrow/balance/{address}"

// escrowOpenBalance is what every address holds in the offline escrow's
// ledger before its first payment: 1 USDC.
const escrowOpenBalance = 1_000_000

// authorizerLabel is what the receipts' signing key signs to derive the
// escrow's receiver authorizer key.
const authorizerLabel = "vouch demo server: the escrow's receiver authorizer key"

// demoEscrow is the offline escrow of the trust call's "auth-capture"
// offers: it holds, captures and voids on a ledger of its own, never on
// chain, and the server consents to its operations with a receiver
// authorizer key derived from the receipts' signing key, so that a
// server restarted with the same -signing-key FILE (or another server
// given it) consents to the payments an earlier run held.
type demoEscrow struct {
	escrow     *evm.Escrow
	authorizer evm.ReceiverAuthorizer
}

// newDemoEscrow returns the demo escrow on chain, or on a new offline
// escrow when chain is nil, with the authorizer key of signer: the hash
// of signer's Ed25519 signature (deterministic) of authorizerLabel.
func newDemoEscrow(ctx context.Context, signer *receipt.Ed25519Signer, chain *evm.Escrow) (*demoEscrow, error) {
	sig, err := signer.Sign(ctx, []byte(authorizerLabel))
	if err != nil {
		return nil, err
	}
	seed := sha256.Sum256(sig)
	key, err := evm.ParsePrivateKey("0x" + hex.EncodeToString(seed[:]))
	if err != nil {
		return nil, fmt.Errorf("the escrow's receiver authorizer key: %w", err)
	}
	if chain == nil {
		chain = &evm.Escrow{OpenBalance: big.NewInt(escrowOpenBalance)}
	}
	return &demoEscrow{escrow: chain, authorizer: evm.ReceiverAuthorizer{Key: key}}, nil
}

// offer returns an "auth-capture" offer of price to payTo, held in the
// offline escrow, its asset transferred by method (evm.TransferEIP3009 or
// evm.TransferPermit2).
func (d *demoEscrow) offer(payTo, price, method string) (x402.PaymentRequirements, error) {
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	o, err := evm.AuthCaptureUSDC(network, payTo, price, operator, d.authorizer.Key.Address())
	if err == nil {
		o.Extra["assetTransferMethod"] = method
	}
	return o, err
}

// config is the x402 middleware's escrow configuration, its payments
// kept in ledger.
func (d *demoEscrow) config(ledger x402.EscrowLedger) *x402.EscrowConfig {
	return &x402.EscrowConfig{Authorizer: d.authorizer, Ledger: ledger}
}

// facilitator settles "auth-capture" payments in the offline escrow and
// the others with f.
func (d *demoEscrow) facilitator(f x402.Facilitator) x402.Facilitator {
	return byScheme{other: f, escrow: d.escrow}
}

// byScheme sends "auth-capture" payments to escrow, the others to other.
type byScheme struct {
	other  x402.Facilitator
	escrow *evm.Escrow
}

func (b byScheme) pick(r x402.PaymentRequirements) x402.Facilitator {
	if r.Scheme == x402.SchemeAuthCapture {
		return b.escrow
	}
	return b.other
}

func (b byScheme) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	return b.pick(r).Verify(ctx, p, r)
}

func (b byScheme) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	return b.pick(r).Settle(ctx, p, r)
}

func (b byScheme) Supported(ctx context.Context) (*x402.SupportedResponse, error) {
	out, err := b.other.Supported(ctx)
	if err != nil {
		return nil, err
	}
	more, err := b.escrow.Supported(ctx)
	if err != nil {
		return nil, err
	}
	out.Kinds = append(out.Kinds, more.Kinds...)
	return out, nil
}

// escrowBalance is the answer of escrowBalancePath.
type escrowBalance struct {
	Address string `json:"address"`
	Asset   string `json:"asset"`
	Balance string `json:"balance"`
}

// balanceHandler answers the escrow ledger's USDC balance of an address.
// It takes no query, and refuses one as the library's routes do.
func (d *demoEscrow) balanceHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpapi.CheckNoQuery(w, r) {
			return
		}
		who, err := evm.ParseAddress(r.PathValue("address"))
		if err != nil {
			httpapi.WriteProblem(w, r, problem.Invalid([]problem.FieldError{{Field: "address", Rule: "address", Message: err.Error()}}))
			return
		}
		o, err := d.offer(evm.OfflineFacilitatorAddress, "$0.001", evm.TransferEIP3009)
		if err != nil {
			httpapi.WriteProblem(w, r, problem.New(http.StatusInternalServerError, problem.CodeInternal, "the escrow's asset is unknown"))
			return
		}
		token, _ := evm.ParseAddress(o.Asset)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(escrowBalance{Address: who.String(), Asset: token.String(), Balance: d.escrow.Balance(token, who).String()})
	})
}

// escrowFinishEvery is how often the server finishes the escrowed
// payments left held: well within the capture window (ten minutes), so
// that a payment whose capture failed for a moment is captured again
// before its deadline.
const escrowFinishEvery = time.Minute

// finishEscrows captures or voids, by their recorded verdicts, the
// escrowed payments that were held and not finished (by an earlier run
// that stopped, or a capture the facilitator could not be reached for),
// and logs what it did.
func finishEscrows(ctx context.Context, r *escrow.Recovery, log *slog.Logger) {
	done, err := r.Finish(ctx)
	for _, f := range done {
		log.Info("escrow finished", "payment", f.ID, "operation", f.Outcome.Operation, "success", f.Outcome.Settlement.Success, "sent", f.Sent)
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("escrow recovery", "error", err)
	}
}
