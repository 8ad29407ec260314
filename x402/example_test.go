package x402_test

import (
	"fmt"

	"github.com/vouchkit/vouch/x402"
)

func ExampleParsePrice() {
	amount, err := x402.ParsePrice("$0.001", 6) // USDC has 6 decimals
	fmt.Println(amount, err)
	// Output: 1000 <nil>
}

func ExampleNetworkCAIP2() {
	caip2, _ := x402.NetworkCAIP2("base-sepolia")
	name, _ := x402.NetworkV1("eip155:8453")
	fmt.Println(caip2, name)
	// Output: eip155:84532 base
}

func ExampleDecodePaymentRequired() {
	// The PAYMENT-REQUIRED header of the x402 HTTP transport specification.
	terms, err := x402.DecodePaymentRequired(specPaymentRequired)
	if err != nil {
		fmt.Println(err)
		return
	}
	o := terms.Accepts[0]
	fmt.Println(terms.Resource.URL)
	fmt.Println(o.Scheme, o.Amount, o.Network, o.ExtraString("name"))
	// Output:
	// https://api.example.com/premium-data
	// exact 10000 eip155:84532 USDC
}

func ExampleEncodeHeader() {
	v, _ := x402.EncodeHeader(x402.SettleResponse{Success: true, Transaction: "0x12", Network: "eip155:84532"})
	fmt.Println(v)
	s, _ := x402.DecodeSettleResponse(v)
	fmt.Println(s.Success, s.Transaction)
	// Output:
	// eyJzdWNjZXNzIjp0cnVlLCJ0cmFuc2FjdGlvbiI6IjB4MTIiLCJuZXR3b3JrIjoiZWlwMTU1Ojg0NTMyIn0=
	// true 0x12
}
