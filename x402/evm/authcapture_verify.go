package evm

import (
	"fmt"
	"math/big"
	"time"
)

// The reasons an "auth-capture" payment is refused, in the words of the
// scheme's EVM binding.
const (
	ReasonAuthCapturePayloadFormat     = "invalid_auth_capture_evm_payload_format"
	ReasonAuthCapturePayloadType       = "invalid_auth_capture_evm_payload_type"
	ReasonAuthCaptureExtra             = "invalid_auth_capture_evm_extra"
	ReasonAuthCaptureMethodMismatch    = "invalid_auth_capture_evm_payload_method_mismatch"
	ReasonAuthCaptureDeadlineOrdering  = "invalid_auth_capture_evm_deadline_ordering"
	ReasonAuthCaptureCaptureExpired    = "invalid_auth_capture_evm_capture_deadline_expired"
	ReasonAuthCaptureRefundExpired     = "invalid_auth_capture_evm_refund_deadline_expired"
	ReasonAuthCaptureExpired           = "invalid_auth_capture_evm_authorization_expired"
	ReasonAuthCaptureNotYetValid       = "invalid_auth_capture_evm_authorization_not_yet_valid"
	ReasonAuthCaptureCollectorMismatch = "invalid_auth_capture_evm_token_collector_mismatch"
	ReasonAuthCaptureTokenMismatch     = "invalid_auth_capture_evm_token_mismatch"
	ReasonAuthCaptureSignature         = "invalid_auth_capture_evm_signature"
	ReasonAuthCaptureAmountMismatch    = "invalid_auth_capture_evm_amount_mismatch"
	ReasonAuthCaptureNonceMismatch     = "invalid_auth_capture_evm_nonce_mismatch"
	ReasonAuthCaptureSaltBinding       = "invalid_auth_capture_evm_salt_binding_mismatch"
	ReasonAuthCaptureOperatorMismatch  = "invalid_auth_capture_evm_operator_mismatch"
	ReasonAuthCaptureAuthorizerSig     = "invalid_auth_capture_evm_authorizer_signature"
	ReasonAuthCaptureVoidAuthorizerSig = "invalid_auth_capture_evm_void_authorizer_signature"
	ReasonAuthCaptureUnexpectedState   = "invalid_auth_capture_evm_unexpected_payment_state"
	ReasonAuthCaptureLifecycleNotRelay = "invalid_auth_capture_evm_lifecycle_not_relayed"
	ReasonAuthCaptureOperatorType      = "invalid_auth_capture_evm_unsupported_operator_type"
	ReasonAuthCaptureNotAdmitted       = "invalid_auth_capture_evm_operator_not_admitted"
	ReasonAuthCapturePaymentFlow       = "invalid_auth_capture_evm_unsupported_payment_flow"
	ReasonAuthCaptureInsufficientBal   = "invalid_auth_capture_evm_insufficient_balance"
	ReasonAuthCaptureAlreadyCollected  = "invalid_auth_capture_evm_payment_already_collected"
	ReasonAuthCaptureFeeOutOfRange     = "invalid_auth_capture_evm_fee_bps_out_of_range"
	ReasonAuthCaptureFeeReceiver       = "invalid_auth_capture_evm_fee_receiver"
	ReasonAuthCaptureInsufficientAuth  = "invalid_auth_capture_evm_insufficient_authorization"
	ReasonAuthCaptureZeroAuthorization = "invalid_auth_capture_evm_zero_authorization"
	ReasonAuthCaptureRefundExceeds     = "invalid_auth_capture_evm_refund_exceeds_capture"
	ReasonAuthCaptureRefundFunding     = "invalid_auth_capture_evm_refund_funding_unavailable"
	ReasonAuthCaptureVoidFullCapture   = "invalid_auth_capture_evm_void_remainder_full_capture"
	ReasonAuthCaptureZeroFeeReceiver   = "invalid_auth_capture_evm_zero_fee_receiver"
	ReasonAuthCaptureScheme            = "invalid_auth_capture_evm_scheme"
	ReasonAuthCaptureNetworkMismatch   = "invalid_auth_capture_evm_network_mismatch"
	// ReasonAuthCaptureSender: a reclaim by another than the payer (the
	// escrow's InvalidSender).
	ReasonAuthCaptureSender = "invalid_auth_capture_evm_sender"
	// ReasonAuthCaptureBeforeExpiry: a reclaim before the capture
	// deadline (the escrow's BeforeAuthorizationExpiry).
	ReasonAuthCaptureBeforeExpiry = "invalid_auth_capture_evm_before_authorization_expiry"
)

// ClockSkew is the floor the scheme puts between now and a deadline a
// payment must still meet: an authorization that expires within it, or a
// capture deadline within it, is refused.
const ClockSkew = 6 * time.Second

// AuthCaptureError is why an "auth-capture" payment or operation is
// refused: one of the Reason constants and a message for a person.
type AuthCaptureError struct {
	Reason  string
	Message string
}

// Error says "evm: ", the reason and the message.
func (e *AuthCaptureError) Error() string { return "evm: " + e.Reason + ": " + e.Message }

func refuse(reason, format string, args ...any) *AuthCaptureError {
	return &AuthCaptureError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// AuthCaptureHold is a payer's authorization that [AuthCaptureTerms.Verify]
// accepted: who pays, and the payment the escrow will hold.
type AuthCaptureHold struct {
	// Payer is the address that signed.
	Payer Address
	// PaymentInfo is the payment, payer included.
	PaymentInfo PaymentInfo
	// Hash is PaymentInfo's hash in the escrow, its identity on chain.
	Hash [32]byte
	// Payload is the payload verified.
	Payload AuthCapturePayload
}

// Verify checks a payer's payload against the terms at now, as the
// binding's facilitator does before it simulates the collect (checks 6
// to 13 of its verification): the method the terms ask for; the salt's
// shape (saltNonce exactly when the terms are Bound); the authorization's
// expiry, a uint48 as the escrow's preApprovalExpiry is; the deadlines
// (now+maxTimeoutSeconds <= captureDeadline, captureDeadline and the
// authorization's expiry beyond now+ClockSkew, the expiry within the
// capture deadline, validAfter not in the future); the deployment's token
// collector; the token (Permit2); the signature, by the payer named in
// the authorization (65-byte ECDSA only, v 27 or 28 as the token and
// Permit2 take it: contract wallets are not supported), over an ERC-3009
// validAfter of 0, the only one the collector redeems (it passes 0 to
// the token whatever the payload says); the amount, exactly the offer's;
// and the nonce, the payer-agnostic hash of the PaymentInfo the terms,
// the salt and the expiry describe (and the salt's commitment when
// Bound). A refusal is an *[AuthCaptureError].
func (t AuthCaptureTerms) Verify(p AuthCapturePayload, now time.Time) (AuthCaptureHold, error) {
	return t.verify(p, &now)
}

// verify is Verify, without the checks of time (7 and 8) when now is
// nil; the others, the expiry's width and validAfter included, are made
// all the same.
func (t AuthCaptureTerms) verify(p AuthCapturePayload, now *time.Time) (AuthCaptureHold, error) {
	var h AuthCaptureHold
	if err := p.check(); err != nil {
		return h, refuse(ReasonAuthCapturePayloadFormat, "%v", err)
	}
	permit2 := p.Permit2Authorization != nil
	if permit2 != (t.Extra.AssetTransferMethod == TransferPermit2) {
		return h, refuse(ReasonAuthCaptureMethodMismatch, "the offer asks for %q", t.Extra.AssetTransferMethod)
	}
	switch bound := t.Bound(); {
	case bound && p.SaltNonce == "":
		return h, refuse(ReasonAuthCapturePayloadFormat, "payload.saltNonce is required: the offer names a receiver authorizer")
	case !bound && p.SaltNonce != "":
		return h, refuse(ReasonAuthCapturePayloadFormat, "payload.saltNonce is present, but the offer binds no receiver authorizer")
	}
	var (
		from, collector, want Address
		value, expiry         string
		validAfter            = "0"
		expiryName            = "payload.permit2Authorization.deadline"
	)
	if permit2 {
		a := p.Permit2Authorization
		from, _ = ParseAddress(a.From)
		collector, want = mustAddress(a.Spender), t.Deployment.Permit2Collector
		value, expiry = a.Permitted.Amount, a.Deadline
	} else {
		a := p.Authorization
		from, _ = ParseAddress(a.From)
		collector, want = mustAddress(a.To), t.Deployment.EIP3009Collector
		value, expiry, validAfter = a.Value, a.ValidBefore, a.ValidAfter
		expiryName = "payload.authorization.validBefore"
	}
	// The expiry is the PaymentInfo's preApprovalExpiry, a uint48: one
	// above it names no payment the escrow can hold.
	exp, _ := parseBig(expiry)
	if !exp.IsUint64() || exp.Uint64() > maxUint48 {
		return h, refuse(ReasonAuthCapturePayloadFormat, "%s %s is above uint48, the type of the escrow's preApprovalExpiry", expiryName, expiry)
	}
	// Deadline ordering and the time window (checks 7 and 8).
	if err := t.checkTimes(exp, validAfter, now); err != nil {
		return h, err
	}
	// Collector and token (checks 9 and 10).
	if collector != want {
		return h, refuse(ReasonAuthCaptureCollectorMismatch, "the authorization goes to %s, the %s token collector of the %s escrow is %s", collector, t.Extra.AssetTransferMethod, t.Deployment.Version, want)
	}
	if permit2 {
		if token := mustAddress(p.Permit2Authorization.Permitted.Token); token != t.Token {
			return h, refuse(ReasonAuthCaptureTokenMismatch, "the authorization is for token %s, the offer for %s", token, t.Token)
		}
	}
	// The payer's signature (check 11), over the validAfter the
	// collector redeems an ERC-3009 authorization with: always 0.
	if after, _ := parseBig(validAfter); after.Sign() != 0 {
		return h, refuse(ReasonAuthCaptureSignature, "authorization.validAfter is %s, but the token collector redeems the authorization with validAfter 0, which the signature does not sign", validAfter)
	}
	var digest [32]byte
	var err error
	if permit2 {
		digest, err = permit2Digest(t.ChainID, *p.Permit2Authorization)
	} else {
		digest, err = receiveDigest(Domain{Name: t.Extra.Name, Version: t.Extra.Version, ChainID: t.ChainID, VerifyingContract: t.Token.String()}, *p.Authorization)
	}
	if err != nil {
		return h, refuse(ReasonAuthCapturePayloadFormat, "%v", err)
	}
	signer, err := recoverAsContract(digest, p.Signature)
	if err != nil {
		return h, refuse(ReasonAuthCaptureSignature, "%v", err)
	}
	if signer != from {
		return h, refuse(ReasonAuthCaptureSignature, "the signature is by %s, not by the payer %s the authorization names", signer, from)
	}
	// The amount (check 12).
	if v, _ := parseBig(value); v.Cmp(t.MaxAmount) != 0 {
		return h, refuse(ReasonAuthCaptureAmountMismatch, "the authorization is for %s, the offer for %s", value, t.MaxAmount)
	}
	// The nonce, which commits to every other field (check 13).
	salt, _ := parseHex32(p.Salt)
	if t.Bound() {
		nonce, _ := parseHex32(p.SaltNonce)
		if BindSalt(t.ReceiverAuthorizer, t.Policy, nonce) != salt {
			return h, refuse(ReasonAuthCaptureSaltBinding, "payload.salt is not the commitment of saltNonce to the offer's receiver authorizer and policy")
		}
	}
	info := t.PaymentInfo(from, salt, exp.Uint64())
	agnostic, err := info.PayerAgnosticHash(t.ChainID, t.Deployment.Escrow)
	if err != nil {
		return h, refuse(ReasonAuthCapturePayloadFormat, "%v", err)
	}
	var nonce [32]byte
	if permit2 {
		n, _ := parseBig(p.Permit2Authorization.Nonce)
		n.FillBytes(nonce[:])
	} else {
		nonce, _ = parseHex32(p.Authorization.Nonce)
	}
	if nonce != agnostic {
		return h, refuse(ReasonAuthCaptureNonceMismatch, "the authorization's nonce is not the payer-agnostic hash %s of the payment the offer describes", hex32(agnostic))
	}
	hash, _ := info.Hash(t.ChainID, t.Deployment.Escrow)
	return AuthCaptureHold{Payer: from, PaymentInfo: info, Hash: hash, Payload: p}, nil
}

// SignAuthCapture makes a payer's payload for the terms at now, signed by
// key, as the official client does: the authorization expires at
// now+maxTimeoutSeconds (PaymentInfo.preApprovalExpiry), is valid from 0,
// goes to the deployment's collector for the terms' method, and its nonce
// is the payer-agnostic hash of the payment; random is the payer's fresh
// 32 bytes (the salt, or when the terms are Bound the saltNonce whose
// commitment is the salt).
func SignAuthCapture(key *PrivateKey, t AuthCaptureTerms, now time.Time, random [32]byte) (AuthCapturePayload, error) {
	salt := random
	p := AuthCapturePayload{}
	if t.Bound() {
		salt = BindSalt(t.ReceiverAuthorizer, t.Policy, random)
		p.SaltNonce = hex32(random)
	}
	p.Salt = hex32(salt)
	expiry := uint64(now.Unix()) + uint64(t.MaxTimeoutSeconds)
	payer := key.Address()
	nonce, err := t.PaymentInfo(payer, salt, expiry).PayerAgnosticHash(t.ChainID, t.Deployment.Escrow)
	if err != nil {
		return AuthCapturePayload{}, err
	}
	var digest [32]byte
	if t.Extra.AssetTransferMethod == TransferPermit2 {
		a := Permit2Transfer{
			From:      payer.String(),
			Permitted: TokenPermissions{Token: t.Token.String(), Amount: t.MaxAmount.String()},
			Spender:   t.Deployment.Permit2Collector.String(),
			Nonce:     new(big.Int).SetBytes(nonce[:]).String(),
			Deadline:  unixString(expiry),
		}
		digest, err = permit2Digest(t.ChainID, a)
		p.Permit2Authorization = &a
	} else {
		a := Authorization{
			From:        payer.String(),
			To:          t.Deployment.EIP3009Collector.String(),
			Value:       t.MaxAmount.String(),
			ValidAfter:  "0",
			ValidBefore: unixString(expiry),
			Nonce:       hex32(nonce),
		}
		digest, err = receiveDigest(Domain{Name: t.Extra.Name, Version: t.Extra.Version, ChainID: t.ChainID, VerifyingContract: t.Token.String()}, a)
		p.Authorization = &a
	}
	if err != nil {
		return AuthCapturePayload{}, err
	}
	p.Signature = hexSig(key.Sign(digest))
	return p, nil
}

// checkTimes runs checks 7 and 8 of the binding: the deadlines' order
// and the authorization's window, which expires at exp and starts at
// validAfter; none when now is nil.
func (t AuthCaptureTerms) checkTimes(exp *big.Int, validAfter string, now *time.Time) *AuthCaptureError {
	if now == nil {
		return nil
	}
	unix := now.Unix()
	skew := int64(ClockSkew / time.Second)
	capture := int64(t.Extra.CaptureDeadline)
	expiry := exp.String()
	after, _ := parseBig(validAfter)
	switch {
	case capture <= unix+skew:
		return refuse(ReasonAuthCaptureCaptureExpired, "the capture deadline %d is not beyond now+%ds (%d)", capture, skew, unix+skew)
	case unix+int64(t.MaxTimeoutSeconds) > capture:
		return refuse(ReasonAuthCaptureDeadlineOrdering, "now+maxTimeoutSeconds (%d) is after the capture deadline %d", unix+int64(t.MaxTimeoutSeconds), capture)
	case exp.Cmp(big.NewInt(capture)) > 0:
		return refuse(ReasonAuthCaptureDeadlineOrdering, "the authorization expires at %s, after the capture deadline %d", expiry, capture)
	case exp.Cmp(big.NewInt(unix+skew)) <= 0:
		return refuse(ReasonAuthCaptureExpired, "the authorization expires at %s, not beyond now+%ds (%d)", expiry, skew, unix+skew)
	case after.Cmp(big.NewInt(unix)) > 0:
		return refuse(ReasonAuthCaptureNotYetValid, "the authorization is valid only from %s", validAfter)
	}
	return nil
}
