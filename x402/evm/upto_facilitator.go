package evm

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/vouchkit/vouch/x402"
)

// The reasons an "upto" payment is invalid, in the words of the official
// SDKs.
const (
	ReasonPermit2Spender     = "invalid_permit2_spender"
	ReasonPermit2Recipient   = "invalid_permit2_recipient_mismatch"
	ReasonUptoFacilitator    = "upto_facilitator_mismatch"
	ReasonPermit2Deadline    = "permit2_deadline_expired"
	ReasonPermit2NotYetValid = "permit2_not_yet_valid"
	ReasonPermit2Amount      = "permit2_amount_mismatch"
	ReasonPermit2Token       = "permit2_token_mismatch"
	ReasonPermit2Signature   = "invalid_permit2_signature"
	ReasonPermit2Nonce       = "permit2_invalid_nonce"
	// ReasonUptoExceedsAmount: a settlement asked for more than the
	// authorized maximum.
	ReasonUptoExceedsAmount = "invalid_upto_evm_payload_settlement_exceeds_amount"
)

// OfflineFacilitatorAddress is the address a [Facilitator] whose Address
// is zero settles "upto" payments as: offers name it in
// extra.facilitatorAddress and payers sign it into their authorization.
// No key is behind it; the offline facilitator sends no transactions.
const OfflineFacilitatorAddress = "0x0000000000000000000000000000000000FaC402"

// address returns the facilitator's settling address.
func (f *Facilitator) address() Address {
	if f.Address != (Address{}) {
		return f.Address
	}
	a, _ := ParseAddress(OfflineFacilitatorAddress)
	return a
}

// checkUpto checks an "upto" proof against the offer r whose amount is
// max, the most the authorization must permit (equal to it, as the
// official facilitators require), and the facilitator's own address.
func (f *Facilitator) checkUpto(p *x402.PaymentPayload, r x402.PaymentRequirements, max string) (checked, *x402.VerifyResponse) {
	var c checked
	var up UptoPayload
	if err := json.NewDecoder(bytes.NewReader(p.Payload)).Decode(&up); err != nil {
		return c, invalid(ReasonInvalidPayload, "", "payload: "+err.Error())
	}
	a := up.Permit2Authorization
	c.permit, c.payer = &a, a.From
	from, err := ParseAddress(a.From)
	if err != nil {
		return c, invalid(ReasonInvalidPayload, "", "permit2Authorization.from: "+err.Error())
	}
	chain, _ := x402.EVMChainID(r.Network) // checked by check
	same := func(s, want string) bool {
		x, err := ParseAddress(s)
		y, err2 := ParseAddress(want)
		return err == nil && err2 == nil && x == y
	}
	switch {
	case !same(a.Spender, UptoProxyAddress):
		return c, invalid(ReasonPermit2Spender, a.From, fmt.Sprintf("the spender is %s, not the upto proxy %s", a.Spender, UptoProxyAddress))
	case !same(a.Witness.To, r.PayTo):
		return c, invalid(ReasonPermit2Recipient, a.From, fmt.Sprintf("the authorization pays %s, the offer asks for %s", a.Witness.To, r.PayTo))
	case !same(a.Witness.Facilitator, f.address().String()):
		return c, invalid(ReasonUptoFacilitator, a.From, fmt.Sprintf("the authorization names facilitator %s, this one is %s", a.Witness.Facilitator, f.address()))
	case !same(a.Permitted.Token, r.Asset):
		return c, invalid(ReasonPermit2Token, a.From, fmt.Sprintf("the authorization is for token %s, the offer for %s", a.Permitted.Token, r.Asset))
	}
	permitted, pok := new(big.Int).SetString(a.Permitted.Amount, 10)
	want, wok := new(big.Int).SetString(max, 10)
	if !wok {
		return c, invalid(ReasonInvalidOffer, a.From, fmt.Sprintf("amount %q is not a number", max))
	}
	if !pok || permitted.Cmp(want) != 0 {
		return c, invalid(ReasonPermit2Amount, a.From, fmt.Sprintf("the authorization permits %s, the offer's maximum is %s", a.Permitted.Amount, max))
	}
	now := big.NewInt(f.now().Unix())
	after, aok := new(big.Int).SetString(a.Witness.ValidAfter, 10)
	deadline, dok := new(big.Int).SetString(a.Deadline, 10)
	if !aok || after.Cmp(now) > 0 {
		return c, invalid(ReasonPermit2NotYetValid, a.From, fmt.Sprintf("the authorization is valid only from %s", a.Witness.ValidAfter))
	}
	if !dok || deadline.Cmp(now) <= 0 {
		return c, invalid(ReasonPermit2Deadline, a.From, fmt.Sprintf("the authorization expired at %s", a.Deadline))
	}
	digest, err := UptoDigest(chain, a)
	if err != nil {
		return c, invalid(ReasonInvalidPayload, a.From, err.Error())
	}
	signer, err := recoverAsContract(digest, up.Signature)
	if err != nil {
		return c, invalid(ReasonPermit2Signature, a.From, err.Error())
	}
	if signer != from {
		return c, invalid(ReasonPermit2Signature, a.From, "the signature is not from permit2Authorization.from")
	}
	nonce, _ := new(big.Int).SetString(a.Nonce, 10) // UptoDigest parsed it
	// Permit2 keeps one nonce space per owner on each chain.
	key := binary.BigEndian.AppendUint64([]byte("permit2:"), chain)
	key = append(append(key, from[:]...), nonce.FillBytes(make([]byte, 32))...)
	c.key, c.payer = string(key), from.String()
	return c, nil
}

// settleUpto settles an "upto" proof for r.Amount, the amount used, at
// most the authorized maximum; a settlement of zero moves nothing, has no
// transaction and consumes the authorization all the same.
func (f *Facilitator) settleUpto(p *x402.PaymentPayload, r x402.PaymentRequirements) *x402.SettleResponse {
	fail := func(reason, payer, msg string) *x402.SettleResponse {
		return &x402.SettleResponse{ErrorReason: reason, ErrorMessage: msg, Payer: payer, Network: r.Network}
	}
	var up UptoPayload
	if err := json.Unmarshal(p.Payload, &up); err != nil {
		return fail(ReasonInvalidPayload, "", "payload: "+err.Error())
	}
	max := up.Permit2Authorization.Permitted.Amount
	c, vr := f.check(p, r, max)
	if vr != nil {
		return fail(vr.InvalidReason, vr.Payer, vr.InvalidMessage)
	}
	amount, ok := new(big.Int).SetString(r.Amount, 10)
	if !ok || amount.Sign() < 0 || strings.HasPrefix(r.Amount, "+") {
		return fail(ReasonInvalidOffer, c.payer, fmt.Sprintf("amount %q is not a number", r.Amount))
	}
	if limit, _ := new(big.Int).SetString(max, 10); amount.Cmp(limit) > 0 {
		return fail(ReasonUptoExceedsAmount, c.payer, fmt.Sprintf("settling %s exceeds the authorized %s", r.Amount, max))
	}
	var tx string
	if amount.Sign() > 0 {
		sum := keccak([]byte("vouch local settlement"), []byte(c.key), []byte(amount.String()))
		tx = "0x" + hex.EncodeToString(sum[:])
	}
	s := Settlement{Scheme: x402.SchemeUpto, Transaction: tx, Network: r.Network, Asset: r.Asset, Payer: c.payer, Amount: amount.String(), Permit2: c.permit, At: f.now()}
	if !f.record(c.key, s) {
		return fail(ReasonPermit2Nonce, c.payer, "the authorization was already settled")
	}
	return &x402.SettleResponse{Success: true, Payer: c.payer, Transaction: tx, Network: r.Network, Amount: s.Amount}
}
