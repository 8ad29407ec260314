package evm_test

import (
	"encoding/hex"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402/evm"
)

// The example of the x402 version 2 specification (section 5.2.1): a
// payment of 10000 atomic units of USDC on Base Sepolia, signed by
// 0x857b06519E91e3A54538791bDbb0E22373e36b66.
var (
	specDomain = evm.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e"}
	specAuth   = evm.Authorization{
		From:        "0x857b06519E91e3A54538791bDbb0E22373e36b66",
		To:          "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		Value:       "10000",
		ValidAfter:  "1740672089",
		ValidBefore: "1740672154",
		Nonce:       "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480",
	}
	specSignature = "0x2d6a7588d6acca505cbf0d9a4a227e0c52c6c34008c8e8986a1283259764173608a2ce6496642e377d6da8dbbf5836e9bd15092f9ecab05ded3d6293af148b571c"
	specDigest    = "f256992871671abcb27ff92885a7afa46218724e5fc0bac35d050115aa1d22e6"
)

func TestTransferDigest_specExample(t *testing.T) {
	got, err := evm.TransferDigest(specDomain, specAuth)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got[:]) != specDigest {
		t.Errorf("digest = %x, want %s", got, specDigest)
	}
}

func TestRecoverHex_specExample(t *testing.T) {
	digest, err := evm.TransferDigest(specDomain, specAuth)
	if err != nil {
		t.Fatal(err)
	}
	got, err := evm.RecoverHex(digest, specSignature)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != specAuth.From {
		t.Errorf("signer = %s, want %s", got, specAuth.From)
	}
}

func TestRecover_changedDomainRecoversAnotherAddress(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    evm.Domain
	}{
		{"name", evm.Domain{Name: "USD Coin", Version: "2", ChainID: 84532, VerifyingContract: specDomain.VerifyingContract}},
		{"chain id", evm.Domain{Name: "USDC", Version: "2", ChainID: 8453, VerifyingContract: specDomain.VerifyingContract}},
		{"version", evm.Domain{Name: "USDC", Version: "1", ChainID: 84532, VerifyingContract: specDomain.VerifyingContract}},
		{"contract", evm.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			digest, err := evm.TransferDigest(tc.d, specAuth)
			if err != nil {
				t.Fatal(err)
			}
			got, err := evm.RecoverHex(digest, specSignature)
			if err == nil && got.String() == specAuth.From {
				t.Errorf("a signature for another domain recovered to the payer %s", got)
			}
		})
	}
}

func TestRecover_rejectsMalformedSignatures(t *testing.T) {
	digest, _ := evm.TransferDigest(specDomain, specAuth)
	sig, _ := hex.DecodeString(specSignature[2:])
	highS := append([]byte(nil), sig...)
	// s' = n - s gives the same point; token contracts refuse the high form.
	n, _ := new(big.Int).SetString("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141", 16)
	s := new(big.Int).SetBytes(sig[32:64])
	new(big.Int).Sub(n, s).FillBytes(highS[32:64])
	highS[64] ^= 1 // 27 <-> 28
	badV := append([]byte(nil), sig...)
	badV[64] = 29
	for name, sg := range map[string][]byte{"short": sig[:64], "high s": highS, "v 29": badV} {
		if _, err := evm.Recover(digest, sg); !errors.Is(err, evm.ErrBadSignature) {
			t.Errorf("%s: err = %v, want ErrBadSignature", name, err)
		}
	}
	zeroV := append([]byte(nil), sig...)
	zeroV[64] -= 27
	if got, err := evm.Recover(digest, zeroV); err != nil || got.String() != specAuth.From {
		t.Errorf("v as 0/1: %s, %v; want the payer", got, err)
	}
}

func TestTransferDigest_rejectsMalformedAuthorization(t *testing.T) {
	for _, mutate := range []func(a *evm.Authorization){
		func(a *evm.Authorization) { a.From = "0x857b" },
		func(a *evm.Authorization) { a.To = "0x209693bc6afc0c5328ba36faf03c514ef312287C" }, // bad checksum
		func(a *evm.Authorization) { a.Value = "-1" },
		func(a *evm.Authorization) { a.ValidBefore = "1e9" },
		func(a *evm.Authorization) { a.Value = "1" + strings.Repeat("0", 78) }, // above 2^256
		func(a *evm.Authorization) { a.Nonce = "0x1234" },
	} {
		a := specAuth
		mutate(&a)
		if _, err := evm.TransferDigest(specDomain, a); err == nil {
			t.Errorf("TransferDigest(%+v) accepted a malformed authorization", a)
		}
	}
}

func TestParseAddress(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"0x857b06519E91e3A54538791bDbb0E22373e36b66", true},
		{"0x857b06519e91e3a54538791bdbb0e22373e36b66", true},
		{"0x857B06519E91E3A54538791BDBB0E22373E36B66", true},
		{"0x857b06519E91e3A54538791bDbb0E22373e36B66", false}, // checksum broken
		{"857b06519E91e3A54538791bDbb0E22373e36b66", false},
		{"0x857b06519E91e3A54538791bDbb0E22373e36b6", false},
		{"0xZZ7b06519E91e3A54538791bDbb0E22373e36b66", false},
	} {
		a, err := evm.ParseAddress(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseAddress(%q) err = %v, want ok %v", tc.in, err, tc.ok)
		}
		if err == nil && a.String() != "0x857b06519E91e3A54538791bDbb0E22373e36b66" {
			t.Errorf("ParseAddress(%q).String() = %s, want the EIP-55 form", tc.in, a)
		}
	}
}
