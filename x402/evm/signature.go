package evm

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// ErrBadSignature: a signature that is malformed or from which no signer
// can be recovered.
var ErrBadSignature = errors.New("evm: bad signature")

// PrivateKey is a secp256k1 signing key. Its String and GoString methods
// print the address only, so that the key never reaches a log.
type PrivateKey struct {
	key  *secp256k1.PrivateKey
	addr Address
}

// ParsePrivateKey reads a private key of 64 hex digits, with or without
// 0x, ignoring surrounding spaces. The key must be in [1, n-1].
func ParsePrivateKey(s string) (*PrivateKey, error) {
	h := strings.TrimSpace(s)
	h = strings.TrimPrefix(strings.TrimPrefix(h, "0x"), "0X")
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 32 {
		return nil, errors.New("evm: private key is not 64 hex digits")
	}
	var n secp256k1.ModNScalar
	if overflow := n.SetByteSlice(b); overflow || n.IsZero() {
		return nil, errors.New("evm: private key is out of range")
	}
	k := secp256k1.NewPrivateKey(&n)
	return &PrivateKey{key: k, addr: pubAddress(k.PubKey())}, nil
}

// Address returns the address of the key.
func (k *PrivateKey) Address() Address { return k.addr }

// String returns a description that names the address only.
func (k *PrivateKey) String() string { return "evm.PrivateKey(" + k.addr.String() + ")" }

// GoString is String, so that %#v does not print the key.
func (k *PrivateKey) GoString() string { return k.String() }

// Sign signs a 32-byte digest and returns the 65-byte signature r‖s‖v
// with v 27 or 28 and a low s, as Ethereum contracts expect.
func (k *PrivateKey) Sign(digest [32]byte) []byte {
	compact := ecdsa.SignCompact(k.key, digest[:], false) // recovery code ‖ r ‖ s, code = 27 + recid
	return append(compact[1:65:65], compact[0])
}

// pubAddress is the last 20 bytes of the Keccak-256 hash of the
// uncompressed public key without its 0x04 prefix.
func pubAddress(pub *secp256k1.PublicKey) Address {
	sum := keccak(pub.SerializeUncompressed()[1:])
	var a Address
	copy(a[:], sum[12:])
	return a
}

// Recover returns the address whose key made sig over digest. sig is
// r‖s‖v with v 27 or 28 (0 and 1 are read as 27 and 28, which token
// contracts and Permit2 do not do: [Facilitator] and
// [AuthCaptureTerms.Verify] refuse them); a high s is rejected, as token
// contracts reject it. Errors wrap ErrBadSignature.
func Recover(digest [32]byte, sig []byte) (Address, error) {
	if len(sig) != 65 {
		return Address{}, fmt.Errorf("%w: %d bytes, want 65", ErrBadSignature, len(sig))
	}
	v := sig[64]
	if v < 27 {
		v += 27
	}
	if v != 27 && v != 28 {
		return Address{}, fmt.Errorf("%w: v is %d, want 27 or 28", ErrBadSignature, sig[64])
	}
	var s secp256k1.ModNScalar
	if overflow := s.SetByteSlice(sig[32:64]); overflow || s.IsOverHalfOrder() {
		return Address{}, fmt.Errorf("%w: s is not in the lower half of the curve order", ErrBadSignature)
	}
	compact := make([]byte, 0, 65)
	compact = append(append(compact, v), sig[:64]...)
	pub, _, err := ecdsa.RecoverCompact(compact, digest[:])
	if err != nil {
		return Address{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return pubAddress(pub), nil
}

// RecoverHex is Recover for a signature written as 0x and 130 hex digits.
func RecoverHex(digest [32]byte, sig string) (Address, error) {
	b, err := decodeSig(sig)
	if err != nil {
		return Address{}, err
	}
	return Recover(digest, b)
}

// recoverAsContract is RecoverHex as USDC's ECRecover and Permit2 check
// a 65-byte signature: v must be 27 or 28, the 0 and 1 that Recover reads
// as 27 and 28 being refused there (ECRecover reverts, and ecrecover
// gives Permit2 no signer).
func recoverAsContract(digest [32]byte, sig string) (Address, error) {
	b, err := decodeSig(sig)
	if err != nil {
		return Address{}, err
	}
	if len(b) == 65 && b[64] != 27 && b[64] != 28 {
		return Address{}, fmt.Errorf("%w: v is %d, want 27 or 28", ErrBadSignature, b[64])
	}
	return Recover(digest, b)
}

func decodeSig(sig string) ([]byte, error) {
	h, ok := strings.CutPrefix(sig, "0x")
	b, err := hex.DecodeString(h)
	if !ok || err != nil {
		return nil, fmt.Errorf("%w: not 0x and hex digits", ErrBadSignature)
	}
	return b, nil
}

// hexSig writes a signature as 0x and hex digits.
func hexSig(sig []byte) string { return "0x" + hex.EncodeToString(sig) }
