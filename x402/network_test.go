package x402_test

import (
	"testing"

	"github.com/vouchkit/vouch/x402"
)

func TestNetworks(t *testing.T) {
	for _, tc := range []struct {
		id      string
		caip2   string
		v1      string
		chain   uint64
		testnet bool
	}{
		{"base-sepolia", "eip155:84532", "base-sepolia", 84532, true},
		{"eip155:84532", "eip155:84532", "base-sepolia", 84532, true},
		{"base", "eip155:8453", "base", 8453, false},
		{"eip155:43113", "eip155:43113", "avalanche-fuji", 43113, true},
		{"eip155:999999", "eip155:999999", "", 999999, false},
		{"solana-devnet", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "solana-devnet", 0, true},
		{"nowhere", "", "", 0, false},
		{"eip155:0x1", "eip155:0x1", "", 0, false},
	} {
		caip2, _ := x402.NetworkCAIP2(tc.id)
		v1, _ := x402.NetworkV1(tc.id)
		chain, _ := x402.EVMChainID(tc.id)
		if caip2 != tc.caip2 || v1 != tc.v1 || chain != tc.chain || x402.IsTestnet(tc.id) != tc.testnet {
			t.Errorf("%s: caip2 %q v1 %q chain %d testnet %v; want %q %q %d %v", tc.id, caip2, v1, chain, x402.IsTestnet(tc.id), tc.caip2, tc.v1, tc.chain, tc.testnet)
		}
	}
	if !x402.SameNetwork("base-sepolia", "eip155:84532") || x402.SameNetwork("base", "eip155:84532") || x402.SameNetwork("nowhere", "nowhere") {
		t.Error("SameNetwork does not map between the namings")
	}
}
