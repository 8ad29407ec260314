package evm_test

import (
	"fmt"

	"github.com/vouchkit/vouch/x402/evm"
)

func ExampleTransferDigest() {
	// The example payment of the x402 version 2 specification.
	d := evm.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e"}
	a := evm.Authorization{
		From:        "0x857b06519E91e3A54538791bDbb0E22373e36b66",
		To:          "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		Value:       "10000",
		ValidAfter:  "1740672089",
		ValidBefore: "1740672154",
		Nonce:       "0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480",
	}
	digest, _ := evm.TransferDigest(d, a)
	signer, _ := evm.RecoverHex(digest, "0x2d6a7588d6acca505cbf0d9a4a227e0c52c6c34008c8e8986a1283259764173608a2ce6496642e377d6da8dbbf5836e9bd15092f9ecab05ded3d6293af148b571c")
	fmt.Printf("%x\n%s\n", digest, signer)
	// Output:
	// f256992871671abcb27ff92885a7afa46218724e5fc0bac35d050115aa1d22e6
	// 0x857b06519E91e3A54538791bDbb0E22373e36b66
}

func ExampleUSDC() {
	o, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Scheme, o.Network, o.Amount, o.Asset, o.Extra["name"], o.Extra["version"])
	// Output: exact eip155:84532 1000 0x036CbD53842c5426634e7929541eC2318f3dCF7e USDC 2
}
