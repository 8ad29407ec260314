package evm

import (
	"encoding/binary"
	"fmt"
)

// The contracts of the "upto" scheme, at the same address on every EVM
// chain (deployed with CREATE2).
const (
	// Permit2Address is Uniswap's canonical Permit2 contract, the verifying
	// contract of the signature.
	Permit2Address = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
	// UptoProxyAddress is the x402UptoPermit2Proxy contract, the spender
	// every "upto" authorization names: it transfers at most the
	// permitted amount, to the witness's recipient only.
	UptoProxyAddress = "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002"
)

// TokenPermissions is the token and the most that may be transferred.
type TokenPermissions struct {
	// Token is the token contract, the offer's asset.
	Token string `json:"token"`
	// Amount is the most that may be transferred, in atomic units, as a
	// decimal string: the offer's amount.
	Amount string `json:"amount"`
}

// UptoWitness is the data the payer binds into an "upto" signature
// besides the permit: who receives the funds, which facilitator may
// settle, and from when.
type UptoWitness struct {
	// To is the recipient, the offer's payTo.
	To string `json:"to"`
	// Facilitator is the only address that may settle the authorization,
	// the offer's extra.facilitatorAddress.
	Facilitator string `json:"facilitator"`
	// ValidAfter is the Unix time from which the authorization is valid,
	// as a decimal string.
	ValidAfter string `json:"validAfter"`
}

// Permit2Authorization is a Permit2 PermitWitnessTransferFrom message
// with an [UptoWitness], as it travels in an "upto" proof: addresses in
// hex, numbers (the nonce included) as decimal strings.
type Permit2Authorization struct {
	// From is the payer, the owner of the tokens. It is not part of the
	// signed message: the signature recovers to it.
	From string `json:"from"`
	// Permitted is the token and the most that may be transferred.
	Permitted TokenPermissions `json:"permitted"`
	// Spender is the contract allowed to transfer, UptoProxyAddress.
	Spender string `json:"spender"`
	// Nonce is a random 256-bit number, in decimal: Permit2's nonces are
	// unordered, each usable once.
	Nonce string `json:"nonce"`
	// Deadline is the Unix time after which the authorization expires.
	Deadline string `json:"deadline"`
	// Witness binds the recipient, the facilitator and the start time.
	Witness UptoWitness `json:"witness"`
}

// UptoPayload is the payload of an "upto" proof on EVM networks.
type UptoPayload struct {
	// Signature is the 65-byte EIP-712 signature r‖s‖v in hex.
	Signature string `json:"signature"`
	// Permit2Authorization is the signed message and its signer.
	Permit2Authorization Permit2Authorization `json:"permit2Authorization"`
}

// The EIP-712 types of a Permit2 witness transfer with the "upto"
// witness. Referenced types follow the primary type in alphabetical order.
const (
	permit2DomainType = "EIP712Domain(string name,uint256 chainId,address verifyingContract)"
	tokenPermsType    = "TokenPermissions(address token,uint256 amount)"
	uptoWitnessType   = "Witness(address to,address facilitator,uint256 validAfter)"
	permitWitnessType = "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,Witness witness)" + tokenPermsType + uptoWitnessType
)

// UptoDigest returns the EIP-712 digest a payer signs for a on the chain
// chainID: the domain is Permit2's (name "Permit2", no version, the chain
// id, Permit2Address), the message PermitWitnessTransferFrom(permitted,
// spender, nonce, deadline, witness) with the witness Witness(to,
// facilitator, validAfter).
func UptoDigest(chainID uint64, a Permit2Authorization) ([32]byte, error) {
	var chain [32]byte
	binary.BigEndian.PutUint64(chain[24:], chainID)
	contract, _ := ParseAddress(Permit2Address)
	dt, name := keccak([]byte(permit2DomainType)), keccak([]byte("Permit2"))
	sep := keccak(dt[:], name[:], chain[:], word(contract[:]))

	addr := func(field, s string) ([]byte, error) {
		a, err := ParseAddress(s)
		if err != nil {
			return nil, fmt.Errorf("evm: permit2Authorization.%s: %w", field, err)
		}
		return word(a[:]), nil
	}
	num := func(field, s string) ([]byte, error) {
		w, err := uint256(s)
		if err != nil {
			return nil, fmt.Errorf("evm: permit2Authorization.%s: %w", field, err)
		}
		return w, nil
	}
	var words [8][]byte
	var err error
	for i, f := range []struct {
		field, v string
		parse    func(string, string) ([]byte, error)
	}{
		{"permitted.token", a.Permitted.Token, addr},
		{"permitted.amount", a.Permitted.Amount, num},
		{"spender", a.Spender, addr},
		{"nonce", a.Nonce, num},
		{"deadline", a.Deadline, num},
		{"witness.to", a.Witness.To, addr},
		{"witness.facilitator", a.Witness.Facilitator, addr},
		{"witness.validAfter", a.Witness.ValidAfter, num},
	} {
		if words[i], err = f.parse(f.field, f.v); err != nil {
			return [32]byte{}, err
		}
	}
	tpt, wt, pt := keccak([]byte(tokenPermsType)), keccak([]byte(uptoWitnessType)), keccak([]byte(permitWitnessType))
	perms := keccak(tpt[:], words[0], words[1])
	witness := keccak(wt[:], words[5], words[6], words[7])
	msg := keccak(pt[:], perms[:], words[2], words[3], words[4], witness[:])
	return keccak([]byte{0x19, 0x01}, sep[:], msg[:]), nil
}
