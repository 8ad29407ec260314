package evm_test

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

var acNow = time.Unix(1_800_000_000, 0)

func acTerms(t *testing.T, edit func(r *x402.PaymentRequirements)) evm.AuthCaptureTerms {
	t.Helper()
	r := acOffer()
	if edit != nil {
		edit(&r)
	}
	terms, err := evm.ParseAuthCaptureOffer(r)
	if err != nil {
		t.Fatal(err)
	}
	return terms
}

func acKey(t testing.TB, hex string) *evm.PrivateKey {
	t.Helper()
	k, err := evm.ParsePrivateKey(hex)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const (
	acPayerKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	acOtherKey = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
)

// Verify accepts what SignAuthCapture signs for either method, bound or
// unbound, and refuses each payload that breaks one rule with the reason
// the binding names for it.
func TestAuthCaptureVerify(t *testing.T) {
	payer, other := acKey(t, acPayerKey), acKey(t, acOtherKey)
	random := [32]byte{1, 2, 3}
	permit2 := func(r *x402.PaymentRequirements) { r.Extra["assetTransferMethod"] = "permit2" }
	unbound := func(r *x402.PaymentRequirements) {
		delete(r.Extra, "receiverAuthorizer")
		r.Extra["captureMode"] = "deferred"
	}
	sign := func(t *testing.T, key *evm.PrivateKey, terms evm.AuthCaptureTerms, at time.Time) evm.AuthCapturePayload {
		t.Helper()
		p, err := evm.SignAuthCapture(key, terms, at, random)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name   string
		offer  func(r *x402.PaymentRequirements) // the terms verified against
		make   func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload
		at     time.Time // when verified; zero means acNow
		reason string    // "" when accepted
	}{
		{"eip3009 bound", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			return sign(t, payer, terms, acNow)
		}, time.Time{}, ""},
		{"eip3009 unbound", unbound, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			return sign(t, payer, terms, acNow)
		}, time.Time{}, ""},
		{"permit2 bound", permit2, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			return sign(t, payer, terms, acNow)
		}, time.Time{}, ""},
		{"wrong signer", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			p := sign(t, other, terms, acNow)
			p.Authorization.From = payer.Address().String()
			return p
		}, time.Time{}, evm.ReasonAuthCaptureSignature},
		{"wrong signer, permit2", permit2, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			p := sign(t, other, terms, acNow)
			p.Permit2Authorization.From = payer.Address().String()
			return p
		}, time.Time{}, evm.ReasonAuthCaptureSignature},
		{"value edited after signing", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			p := sign(t, payer, terms, acNow)
			p.Authorization.Value = "999999"
			return p
		}, time.Time{}, evm.ReasonAuthCaptureSignature},
		{"wrong amount", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.MaxAmount = big.NewInt(999999)
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureAmountMismatch},
		{"wrong amount, permit2", permit2, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.MaxAmount = big.NewInt(2000000)
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureAmountMismatch},
		{"expired", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			return sign(t, payer, terms, acNow)
		}, acNow.Add(60 * time.Second), evm.ReasonAuthCaptureExpired},
		{"expires within the skew", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			return sign(t, payer, terms, acNow)
		}, acNow.Add(54 * time.Second), evm.ReasonAuthCaptureExpired},
		{"capture deadline passed", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			return sign(t, payer, terms, acNow)
		}, time.Unix(1_800_003_600, 0), evm.ReasonAuthCaptureCaptureExpired},
		{"timeout beyond the capture deadline", func(r *x402.PaymentRequirements) { r.MaxTimeoutSeconds = 3600 }, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			return sign(t, payer, terms, acNow)
		}, acNow.Add(time.Second), evm.ReasonAuthCaptureDeadlineOrdering},
		{"authorization beyond the capture deadline", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.MaxTimeoutSeconds = 7200
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureDeadlineOrdering},
		{"wrong escrow's collector", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.Deployment = evm.EscrowV1_0()
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureCollectorMismatch},
		{"wrong escrow address in the nonce", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.Deployment.Escrow = evm.EscrowV1_0().Escrow
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureNonceMismatch},
		{"wrong escrow address, permit2", permit2, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.Deployment.Escrow = evm.EscrowV1_0().Escrow
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureNonceMismatch},
		{"other receiver", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.Receiver = payer.Address()
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureNonceMismatch},
		{"other chain", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.ChainID = 8453
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureSignature},
		{"other receiver authorizer", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.ReceiverAuthorizer = other.Address()
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureSaltBinding},
		{"no saltNonce when bound", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			p := sign(t, payer, terms, acNow)
			p.SaltNonce = ""
			return p
		}, time.Time{}, evm.ReasonAuthCapturePayloadFormat},
		{"saltNonce when unbound", unbound, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			p := sign(t, payer, terms, acNow)
			p.SaltNonce = p.Salt
			return p
		}, time.Time{}, evm.ReasonAuthCapturePayloadFormat},
		{"permit2 for an eip3009 offer", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.Extra.AssetTransferMethod = evm.TransferPermit2
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureMethodMismatch},
		{"other token, permit2", permit2, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			terms.Token = other.Address()
			return sign(t, payer, terms, acNow)
		}, time.Time{}, evm.ReasonAuthCaptureTokenMismatch},
		{"valid from other than 0", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			p := sign(t, payer, terms, acNow)
			p.Authorization.ValidAfter = "1"
			if err := evm.ResignAuthCapture(payer, terms, &p); err != nil {
				t.Fatal(err)
			}
			return p
		}, time.Time{}, evm.ReasonAuthCaptureSignature},
		{"signature with v 0 or 1", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			p := sign(t, payer, terms, acNow)
			p.Signature = lowV(t, p.Signature)
			return p
		}, time.Time{}, evm.ReasonAuthCaptureSignature},
		{"signature with v 0 or 1, permit2", permit2, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			p := sign(t, payer, terms, acNow)
			p.Signature = lowV(t, p.Signature)
			return p
		}, time.Time{}, evm.ReasonAuthCaptureSignature},
		{"not yet valid", nil, func(t *testing.T, terms evm.AuthCaptureTerms) evm.AuthCapturePayload {
			p := sign(t, payer, terms, acNow)
			p.Authorization.ValidAfter = "1800000001"
			return p
		}, time.Time{}, evm.ReasonAuthCaptureNotYetValid},
	} {
		t.Run(c.name, func(t *testing.T) {
			terms := acTerms(t, func(r *x402.PaymentRequirements) {
				if c.offer != nil {
					c.offer(r)
				}
			})
			p := c.make(t, terms)
			at := c.at
			if at.IsZero() {
				at = acNow
			}
			hold, err := terms.Verify(p, at)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if hold.Payer != payer.Address() || hold.PaymentInfo.Payer != payer.Address().String() {
					t.Fatalf("hold %+v is not by the payer %s", hold, payer.Address())
				}
				want, _ := hold.PaymentInfo.Hash(terms.ChainID, terms.Deployment.Escrow)
				if hold.Hash != want {
					t.Fatalf("hold hash %x, PaymentInfo.Hash %x", hold.Hash, want)
				}
				return
			}
			var ae *evm.AuthCaptureError
			if !errors.As(err, &ae) || ae.Reason != c.reason {
				t.Fatalf("error %v, want reason %s", err, c.reason)
			}
		})
	}
}

// An authorization's expiry above uint48, the escrow's preApprovalExpiry,
// is refused as malformed, by Verify and by the receiver authorizer's
// Hold, which checks no time: it is never read as its low 64 bits
// (2^64+X as X, a payment the payer did not sign).
func TestAuthCaptureExpiryAboveUint48(t *testing.T) {
	permit2 := func(r *x402.PaymentRequirements) { r.Extra["assetTransferMethod"] = "permit2" }
	for _, c := range []struct {
		name  string
		offer func(r *x402.PaymentRequirements)
		above *big.Int // added to the signed expiry
	}{
		{"2^64 more", nil, new(big.Int).Lsh(big.NewInt(1), 64)},
		{"2^64 more, permit2", permit2, new(big.Int).Lsh(big.NewInt(1), 64)},
		{"2^48", nil, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 48), big.NewInt(acNow.Unix()+60))},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newEscrowBed(t, c.offer)
			p, err := evm.SignAuthCapture(b.payer, b.terms, b.now, [32]byte{9})
			if err != nil {
				t.Fatal(err)
			}
			var expiry *string
			if p.Permit2Authorization != nil {
				expiry = &p.Permit2Authorization.Deadline
			} else {
				expiry = &p.Authorization.ValidBefore
			}
			signed, _ := new(big.Int).SetString(*expiry, 10)
			*expiry = signed.Add(signed, c.above).String()
			if err := evm.ResignAuthCapture(b.payer, b.terms, &p); err != nil {
				t.Fatal(err)
			}
			var ae *evm.AuthCaptureError
			if _, err := b.terms.Verify(p, b.now); !errors.As(err, &ae) || ae.Reason != evm.ReasonAuthCapturePayloadFormat {
				t.Errorf("Verify of expiry %s = %v, want reason %s", *expiry, err, evm.ReasonAuthCapturePayloadFormat)
			}
			raw, _ := json.Marshal(p)
			if got, err := (evm.ReceiverAuthorizer{Key: b.authorizer}).Hold(b.offer, raw); !errors.As(err, &ae) || ae.Reason != evm.ReasonAuthCapturePayloadFormat {
				t.Errorf("Hold of expiry %s = payment %s, %v; want reason %s", *expiry, got.ID, err, evm.ReasonAuthCapturePayloadFormat)
			}
		})
	}
}

// The payer-agnostic hash is the escrow hash of the same payment with a
// zero payer, and the escrow hash depends on the payer, the chain and the
// escrow.
func TestPaymentInfoHash(t *testing.T) {
	terms := acTerms(t, nil)
	info := terms.PaymentInfo(acKey(t, acPayerKey).Address(), [32]byte{9}, 1_800_000_060)
	h, err := info.Hash(84532, terms.Deployment.Escrow)
	if err != nil {
		t.Fatal(err)
	}
	zero := info
	zero.Payer = evm.Address{}.String()
	agnostic, _ := info.PayerAgnosticHash(84532, terms.Deployment.Escrow)
	if z, _ := zero.Hash(84532, terms.Deployment.Escrow); z != agnostic || agnostic == h {
		t.Fatalf("payer-agnostic %x, zero payer %x, with payer %x", agnostic, z, h)
	}
	if o, _ := info.Hash(8453, terms.Deployment.Escrow); o == h {
		t.Error("the hash does not depend on the chain")
	}
	if o, _ := info.Hash(84532, evm.EscrowV1_0().Escrow); o == h {
		t.Error("the hash does not depend on the escrow")
	}
	bad := info
	bad.MaxAmount = new(big.Int).Lsh(big.NewInt(1), 120).String()
	if _, err := bad.Hash(84532, terms.Deployment.Escrow); err == nil {
		t.Error("a maxAmount above uint120 hashes")
	}
}

// The Payer pays "auth-capture" offers of either method with a payload
// the terms verify, and refuses an offer that holds the payment longer
// than its MaxHold.
func TestPayerAuthCapture(t *testing.T) {
	p := &evm.Payer{Key: acKey(t, acPayerKey), Now: func() time.Time { return acNow }}
	for _, method := range []string{"eip3009", "permit2"} {
		offer := acOffer()
		offer.Extra["assetTransferMethod"] = method
		if !p.Supports(offer) {
			t.Fatalf("%s: not supported", method)
		}
		proof, err := p.Pay(t.Context(), offer)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := evm.DecodeAuthCapturePayload(proof.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := acTerms(t, func(r *x402.PaymentRequirements) { r.Extra["assetTransferMethod"] = method }).Verify(pl, acNow); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	p.MaxHold = 59 * time.Minute
	if _, err := p.Pay(t.Context(), acOffer()); err == nil {
		t.Fatal("a one-hour hold is paid with a MaxHold of 59 minutes")
	}
	bad := acOffer()
	delete(bad.Extra, "captureDeadline")
	if p.Supports(bad) {
		t.Fatal("an offer without a capture deadline is supported")
	}
}

// Every field of a PaymentInfo is in its hash: changing any one changes
// the escrow hash, and every one but the payer the payer-agnostic hash.
func TestPaymentInfoHashEveryField(t *testing.T) {
	terms := acTerms(t, nil)
	base := terms.PaymentInfo(acKey(t, acPayerKey).Address(), [32]byte{9}, 1_800_000_060)
	other := acKey(t, acOtherKey).Address().String()
	edits := map[string]func(pi *evm.PaymentInfo){
		"operator":            func(pi *evm.PaymentInfo) { pi.Operator = other },
		"payer":               func(pi *evm.PaymentInfo) { pi.Payer = other },
		"receiver":            func(pi *evm.PaymentInfo) { pi.Receiver = other },
		"token":               func(pi *evm.PaymentInfo) { pi.Token = other },
		"maxAmount":           func(pi *evm.PaymentInfo) { pi.MaxAmount = "1000001" },
		"preApprovalExpiry":   func(pi *evm.PaymentInfo) { pi.PreApprovalExpiry++ },
		"authorizationExpiry": func(pi *evm.PaymentInfo) { pi.AuthorizationExpiry++ },
		"refundExpiry":        func(pi *evm.PaymentInfo) { pi.RefundExpiry++ },
		"minFeeBps":           func(pi *evm.PaymentInfo) { pi.MinFeeBps++ },
		"maxFeeBps":           func(pi *evm.PaymentInfo) { pi.MaxFeeBps++ },
		"feeReceiver":         func(pi *evm.PaymentInfo) { pi.FeeReceiver = other },
		"salt":                func(pi *evm.PaymentInfo) { pi.Salt = "0x" + strings.Repeat("0", 63) + "1" },
	}
	hash := func(pi evm.PaymentInfo) (full, agnostic [32]byte) {
		var err error
		if full, err = pi.Hash(terms.ChainID, terms.Deployment.Escrow); err != nil {
			t.Fatal(err)
		}
		agnostic, _ = pi.PayerAgnosticHash(terms.ChainID, terms.Deployment.Escrow)
		return full, agnostic
	}
	full0, agnostic0 := hash(base)
	for name, edit := range edits {
		pi := base
		edit(&pi)
		full, agnostic := hash(pi)
		if full == full0 {
			t.Errorf("%s: the escrow hash does not change", name)
		}
		if (agnostic == agnostic0) != (name == "payer") {
			t.Errorf("%s: the payer-agnostic hash changes: %v", name, agnostic != agnostic0)
		}
	}
	// One payment in two spellings (lower-case addresses) has one hash.
	lower := base
	lower.Operator, lower.Receiver = strings.ToLower(lower.Operator), strings.ToLower(lower.Receiver)
	if full, _ := hash(lower); full != full0 {
		t.Error("the spelling of an address changes the hash")
	}
}
