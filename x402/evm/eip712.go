package evm

import (
	"encoding/binary"
	"fmt"
	"math/big"
)

// Domain is the EIP-712 domain of a token: the separator that binds a
// signature to one contract on one chain.
type Domain struct {
	// Name is the token's EIP-712 name ("USDC" on Base Sepolia), given
	// to payers in extra.name.
	Name string
	// Version is the token's EIP-712 version ("2" for USDC), given in
	// extra.version.
	Version string
	// ChainID is the chain id of the network (84532 for Base Sepolia).
	ChainID uint64
	// VerifyingContract is the token contract, the offer's asset.
	VerifyingContract string
}

// Authorization is the EIP-3009 TransferWithAuthorization message, as it
// travels in the proof's payload: addresses in hex, numbers as decimal
// strings, the nonce as 0x and 64 hex digits.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// ExactPayload is the payload of an "exact" proof on EVM networks: a
// signed EIP-3009 authorization.
type ExactPayload struct {
	// Signature is the 65-byte signature r‖s‖v in hex, v being 27 or 28.
	Signature string `json:"signature"`
	// Authorization is the signed message.
	Authorization Authorization `json:"authorization"`
}

// The EIP-712 type strings, whose hashes open each encoded struct.
const (
	domainType   = "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
	transferType = "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
)

// Separator returns the EIP-712 domain separator:
// keccak256(typeHash ‖ keccak256(name) ‖ keccak256(version) ‖ chainId ‖ verifyingContract).
func (d Domain) Separator() ([32]byte, error) {
	contract, err := ParseAddress(d.VerifyingContract)
	if err != nil {
		return [32]byte{}, fmt.Errorf("evm: domain verifyingContract: %w", err)
	}
	var chain [32]byte
	binary.BigEndian.PutUint64(chain[24:], d.ChainID)
	th := keccak([]byte(domainType))
	name := keccak([]byte(d.Name))
	version := keccak([]byte(d.Version))
	return keccak(th[:], name[:], version[:], chain[:], word(contract[:])), nil
}

// TransferDigest returns the EIP-712 digest a payer signs for a:
// keccak256(0x19 ‖ 0x01 ‖ domain separator ‖ hash of the message).
func TransferDigest(d Domain, a Authorization) ([32]byte, error) {
	sep, err := d.Separator()
	if err != nil {
		return [32]byte{}, err
	}
	msg, err := a.typedHash(transferType)
	if err != nil {
		return [32]byte{}, err
	}
	return keccak([]byte{0x19, 0x01}, sep[:], msg[:]), nil
}

// typedHash encodes a as EIP-712 data of type typ: TransferWithAuthorization
// or ReceiveWithAuthorization, whose members are the same.
func (a Authorization) typedHash(typ string) ([32]byte, error) {
	from, err := ParseAddress(a.From)
	if err != nil {
		return [32]byte{}, fmt.Errorf("evm: authorization.from: %w", err)
	}
	to, err := ParseAddress(a.To)
	if err != nil {
		return [32]byte{}, fmt.Errorf("evm: authorization.to: %w", err)
	}
	var words [3][]byte
	for i, f := range [3]struct{ name, v string }{{"value", a.Value}, {"validAfter", a.ValidAfter}, {"validBefore", a.ValidBefore}} {
		w, err := uint256(f.v)
		if err != nil {
			return [32]byte{}, fmt.Errorf("evm: authorization.%s: %w", f.name, err)
		}
		words[i] = w
	}
	nonce, err := parseHex32(a.Nonce)
	if err != nil {
		return [32]byte{}, fmt.Errorf("evm: authorization.nonce: %w", err)
	}
	th := keccak([]byte(typ))
	return keccak(th[:], word(from[:]), word(to[:]), words[0], words[1], words[2], nonce[:]), nil
}

// word left-pads b to 32 bytes, as ABI encoding does for addresses.
func word(b []byte) []byte {
	w := make([]byte, 32)
	copy(w[32-len(b):], b)
	return w
}

// uint256 encodes a decimal string as a 32-byte big-endian word.
func uint256(s string) ([]byte, error) {
	n, err := uint256Int(s)
	if err != nil {
		return nil, err
	}
	return n.FillBytes(make([]byte, 32)), nil
}

// uint256Int reads a decimal uint256: digits only, below 2^256.
func uint256Int(s string) (*big.Int, error) {
	n, ok := new(big.Int).SetString(s, 10)
	switch {
	case !ok || s == "" || s[0] == '+' || s[0] == '-':
		return nil, fmt.Errorf("%q is not a decimal uint256", s)
	case n.BitLen() > 256:
		return nil, fmt.Errorf("a number of %d digits is out of the range of a uint256 (below 2^256, 78 digits at most)", len(s))
	}
	return n, nil
}
