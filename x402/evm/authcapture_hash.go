package evm

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
)

// PaymentInfo is the commerce-payments AuthCaptureEscrow's PaymentInfo
// struct, the identity of an "auth-capture" payment, in the spelling of
// the scheme's lifecycle payloads: addresses as hex, maxAmount as a
// decimal string, expiries (Unix seconds) and fee bounds as numbers, salt
// as 0x and 64 hex digits.
type PaymentInfo struct {
	// Operator is the only address the escrow takes calls from
	// (extra.captureAuthorizer).
	Operator string `json:"operator"`
	// Payer is the payer; zero in the payer-agnostic hash.
	Payer string `json:"payer"`
	// Receiver is the offer's payTo.
	Receiver string `json:"receiver"`
	// Token is the offer's asset.
	Token string `json:"token"`
	// MaxAmount is the offer's amount (uint120).
	MaxAmount string `json:"maxAmount"`
	// PreApprovalExpiry is when the payer's authorization expires: now
	// plus the offer's maxTimeoutSeconds, chosen by the payer (uint48).
	PreApprovalExpiry uint64 `json:"preApprovalExpiry"`
	// AuthorizationExpiry is extra.captureDeadline (uint48).
	AuthorizationExpiry uint64 `json:"authorizationExpiry"`
	// RefundExpiry is extra.refundDeadline (uint48).
	RefundExpiry uint64 `json:"refundExpiry"`
	// MinFeeBps and MaxFeeBps are the fee bounds.
	MinFeeBps uint16 `json:"minFeeBps"`
	MaxFeeBps uint16 `json:"maxFeeBps"`
	// FeeReceiver is extra.feeRecipient.
	FeeReceiver string `json:"feeReceiver"`
	// Salt is the payload's salt.
	Salt string `json:"salt"`
}

// The EIP-712 type strings of the scheme, byte for byte as the contracts
// and the official clients hash them.
const (
	paymentInfoType = "PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount,uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps,uint16 maxFeeBps,address feeReceiver,uint256 salt)"
	saltBindingType = "x402AuthCaptureSaltBinding(address receiverAuthorizer,address policy,uint256 saltNonce)"
	receiveType     = "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
	permitTransfer  = "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)" + tokenPermsType
	captureType     = "Capture(bytes32 paymentInfoHash,uint256 amount,uint256 feeAmount,address feeReceiver,uint256 expectedCapturableAmount,uint256 expectedRefundableAmount)"
	voidType        = "Void(bytes32 paymentInfoHash)"
	refundType      = "Refund(bytes32 paymentInfoHash,uint256 amount,address tokenCollector,uint256 expectedCapturableAmount,uint256 expectedRefundableAmount)"
	operatorName    = "x402 Auth Capture Operator"
)

// check checks every member of pi, naming the first bad one under prefix.
func (pi PaymentInfo) check(prefix string) error {
	if err := checkFields(prefix, addr("operator", pi.Operator), addr("payer", pi.Payer), addr("receiver", pi.Receiver),
		addr("token", pi.Token), num("maxAmount", pi.MaxAmount), addr("feeReceiver", pi.FeeReceiver), word32("salt", pi.Salt)); err != nil {
		return err
	}
	if m, _ := parseBig(pi.MaxAmount); m.Cmp(maxUint120) > 0 {
		return fmt.Errorf("%smaxAmount: %s is above uint120", prefix, pi.MaxAmount)
	}
	for _, e := range []struct {
		name string
		v    uint64
	}{{"preApprovalExpiry", pi.PreApprovalExpiry}, {"authorizationExpiry", pi.AuthorizationExpiry}, {"refundExpiry", pi.RefundExpiry}} {
		if e.v > maxUint48 {
			return fmt.Errorf("%s%s: %d is above uint48", prefix, e.name, e.v)
		}
	}
	if pi.MinFeeBps > 10000 || pi.MaxFeeBps > 10000 {
		return fmt.Errorf("%sminFeeBps, maxFeeBps: %d, %d; each is at most 10000", prefix, pi.MinFeeBps, pi.MaxFeeBps)
	}
	return nil
}

// Hash returns the payment's identity in the escrow on chainID:
// AuthCaptureEscrow.getHash, keccak256(abi.encode(chainId, escrow,
// keccak256(abi.encode(PAYMENT_INFO_TYPEHASH, pi)))). It keys the escrow's
// state and every authorizer signature.
func (pi PaymentInfo) Hash(chainID uint64, escrow Address) ([32]byte, error) {
	if err := pi.check("paymentInfo."); err != nil {
		return [32]byte{}, fmt.Errorf("evm: %w", err)
	}
	a := func(s string) []byte { x, _ := ParseAddress(s); return word(x[:]) }
	n := func(v uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 24), v) }
	amount, _ := uint256(pi.MaxAmount)
	salt, _ := parseHex32(pi.Salt)
	th := keccak([]byte(paymentInfoType))
	inner := keccak(th[:], a(pi.Operator), a(pi.Payer), a(pi.Receiver), a(pi.Token), amount,
		n(pi.PreApprovalExpiry), n(pi.AuthorizationExpiry), n(pi.RefundExpiry),
		n(uint64(pi.MinFeeBps)), n(uint64(pi.MaxFeeBps)), a(pi.FeeReceiver), salt[:])
	return keccak(n(chainID), word(escrow[:]), inner[:]), nil
}

// PayerAgnosticHash returns [PaymentInfo.Hash] of pi with a zero payer:
// the signature nonce of the payer's token authorization, which the payer
// computes before the escrow knows who pays.
func (pi PaymentInfo) PayerAgnosticHash(chainID uint64, escrow Address) ([32]byte, error) {
	pi.Payer = Address{}.String()
	return pi.Hash(chainID, escrow)
}

// BindSalt returns the salt that commits a payment to its receiver
// authorizer and policy: keccak256(abi.encode(SALT_BINDING_TYPEHASH,
// receiverAuthorizer, policy, saltNonce)).
func BindSalt(receiverAuthorizer, policy Address, saltNonce [32]byte) [32]byte {
	th := keccak([]byte(saltBindingType))
	return keccak(th[:], word(receiverAuthorizer[:]), word(policy[:]), saltNonce[:])
}

// PaymentInfo returns the payment that the terms, the payer, the salt
// and the authorization's expiry (validBefore or deadline) describe, as
// the escrow will keep it.
func (t AuthCaptureTerms) PaymentInfo(payer Address, salt [32]byte, preApprovalExpiry uint64) PaymentInfo {
	return PaymentInfo{
		Operator:            t.Operator.String(),
		Payer:               payer.String(),
		Receiver:            t.Receiver.String(),
		Token:               t.Token.String(),
		MaxAmount:           t.MaxAmount.String(),
		PreApprovalExpiry:   preApprovalExpiry,
		AuthorizationExpiry: t.Extra.CaptureDeadline,
		RefundExpiry:        t.Extra.RefundDeadline,
		MinFeeBps:           t.Extra.MinFeeBps,
		MaxFeeBps:           t.Extra.MaxFeeBps,
		FeeReceiver:         t.FeeRecipient.String(),
		Salt:                hex32(salt),
	}
}

// operatorSeparator is the domain of the receiver authorizer's
// signatures: "x402 Auth Capture Operator", version 1, the chain, and the
// operator as verifying contract.
func (t AuthCaptureTerms) operatorSeparator() [32]byte {
	s, _ := Domain{Name: operatorName, Version: "1", ChainID: t.ChainID, VerifyingContract: t.Operator.String()}.Separator()
	return s
}

// CaptureDigest returns the EIP-712 digest the receiver authorizer signs
// to consent to capturing amount (fee feeAmount to feeReceiver) of the
// payment paymentInfoHash, whose escrow balances are expected to be
// capturable and refundable when it runs. Amounts are decimal strings.
func (t AuthCaptureTerms) CaptureDigest(paymentInfoHash [32]byte, amount, feeAmount, feeReceiver, capturable, refundable string) ([32]byte, error) {
	words, err := encodeFields(num("amount", amount), num("feeAmount", feeAmount), addr("feeReceiver", feeReceiver),
		num("expectedCapturableAmount", capturable), num("expectedRefundableAmount", refundable))
	if err != nil {
		return [32]byte{}, err
	}
	return t.operatorDigest(captureType, append([][]byte{paymentInfoHash[:]}, words...)), nil
}

// VoidDigest returns the EIP-712 digest the receiver authorizer signs to
// consent to voiding the hold of the payment paymentInfoHash.
func (t AuthCaptureTerms) VoidDigest(paymentInfoHash [32]byte) [32]byte {
	return t.operatorDigest(voidType, [][]byte{paymentInfoHash[:]})
}

// RefundDigest returns the EIP-712 digest the receiver authorizer signs
// to consent to refunding amount of the payment paymentInfoHash through
// the deployment's operator refund collector, the balances expected as
// for a capture.
func (t AuthCaptureTerms) RefundDigest(paymentInfoHash [32]byte, amount, capturable, refundable string) ([32]byte, error) {
	words, err := encodeFields(num("amount", amount), addr("tokenCollector", t.Deployment.OperatorRefundCollector.String()),
		num("expectedCapturableAmount", capturable), num("expectedRefundableAmount", refundable))
	if err != nil {
		return [32]byte{}, err
	}
	return t.operatorDigest(refundType, append([][]byte{paymentInfoHash[:]}, words...)), nil
}

func (t AuthCaptureTerms) operatorDigest(typ string, words [][]byte) [32]byte {
	th := keccak([]byte(typ))
	msg := keccak(append([][]byte{th[:]}, words...)...)
	sep := t.operatorSeparator()
	return keccak([]byte{0x19, 0x01}, sep[:], msg[:])
}

// encodeFields ABI-encodes address and decimal uint256 fields as words,
// naming the first that does not parse.
func encodeFields(fields ...field) ([][]byte, error) {
	words := make([][]byte, len(fields))
	for i, f := range fields {
		w, err := f.encode()
		if err != nil {
			return nil, fmt.Errorf("evm: %s: %w", f.name, err)
		}
		words[i] = w
	}
	return words, nil
}

// receiveDigest is the EIP-712 digest of an ERC-3009
// ReceiveWithAuthorization in the token's domain.
func receiveDigest(d Domain, a Authorization) ([32]byte, error) {
	sep, err := d.Separator()
	if err != nil {
		return [32]byte{}, err
	}
	msg, err := a.typedHash(receiveType)
	if err != nil {
		return [32]byte{}, err
	}
	return keccak([]byte{0x19, 0x01}, sep[:], msg[:]), nil
}

// permit2Digest is the EIP-712 digest of a Permit2 PermitTransferFrom (no
// witness) in Permit2's domain on chainID.
func permit2Digest(chainID uint64, a Permit2Transfer) ([32]byte, error) {
	words, err := encodeFields(addr("permitted.token", a.Permitted.Token), num("permitted.amount", a.Permitted.Amount),
		addr("spender", a.Spender), num("nonce", a.Nonce), num("deadline", a.Deadline))
	if err != nil {
		return [32]byte{}, err
	}
	var chain [32]byte
	binary.BigEndian.PutUint64(chain[24:], chainID)
	contract, _ := ParseAddress(Permit2Address)
	dt, name := keccak([]byte(permit2DomainType)), keccak([]byte("Permit2"))
	sep := keccak(dt[:], name[:], chain[:], word(contract[:]))
	tpt, pt := keccak([]byte(tokenPermsType)), keccak([]byte(permitTransfer))
	perms := keccak(tpt[:], words[0], words[1])
	msg := keccak(pt[:], perms[:], words[2], words[3], words[4])
	return keccak([]byte{0x19, 0x01}, sep[:], msg[:]), nil
}

// parseBig parses a decimal uint256.
func parseBig(s string) (*big.Int, error) {
	w, err := uint256(s)
	if err != nil {
		return nil, err
	}
	return new(big.Int).SetBytes(w), nil
}

func hex32(b [32]byte) string { return "0x" + hex.EncodeToString(b[:]) }

// unixString formats Unix seconds as the wire's decimal strings.
func unixString(v uint64) string { return strconv.FormatUint(v, 10) }
