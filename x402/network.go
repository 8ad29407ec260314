package x402

import (
	"strconv"
	"strings"
)

// network is one row of the table of known networks.
type network struct {
	v1      string // version 1 name
	caip2   string // version 2 CAIP-2 id
	testnet bool
}

// networks lists the networks with a version 1 name, after the official
// SDKs' tables. EVM chains are eip155:<chain id>.
func networks() []network {
	return []network{
		{"ethereum", "eip155:1", false},
		{"sepolia", "eip155:11155111", true},
		{"base", "eip155:8453", false},
		{"base-sepolia", "eip155:84532", true},
		{"avalanche", "eip155:43114", false},
		{"avalanche-fuji", "eip155:43113", true},
		{"polygon", "eip155:137", false},
		{"polygon-amoy", "eip155:80002", true},
		{"abstract", "eip155:2741", false},
		{"abstract-testnet", "eip155:11124", true},
		{"sei", "eip155:1329", false},
		{"sei-testnet", "eip155:1328", true},
		{"iotex", "eip155:4689", false},
		{"peaq", "eip155:3338", false},
		{"story", "eip155:1514", false},
		{"educhain", "eip155:41923", false},
		{"skale-base-sepolia", "eip155:324705682", true},
		{"megaeth", "eip155:4326", false},
		{"monad", "eip155:143", false},
		{"stable", "eip155:988", false},
		{"stable-testnet", "eip155:2201", true},
		{"solana", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", false},
		{"solana-devnet", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", true},
	}
}

func lookupNetwork(id string) (network, bool) {
	for _, n := range networks() {
		if n.v1 == id || n.caip2 == id {
			return n, true
		}
	}
	return network{}, false
}

// NetworkCAIP2 returns the CAIP-2 id of a network given by its version 1
// name or its CAIP-2 id. A well-formed CAIP-2 id that is not in the table
// is returned as is; ok is false only for an unknown version 1 name.
func NetworkCAIP2(id string) (caip2 string, ok bool) {
	if n, found := lookupNetwork(id); found {
		return n.caip2, true
	}
	if ns, ref, found := strings.Cut(id, ":"); found && ns != "" && ref != "" {
		return id, true
	}
	return "", false
}

// NetworkV1 returns the version 1 name of a network given by either id;
// ok is false when the network has no version 1 name.
func NetworkV1(id string) (name string, ok bool) {
	n, found := lookupNetwork(id)
	return n.v1, found
}

// SameNetwork reports whether a and b name the same network, in either
// naming.
func SameNetwork(a, b string) bool {
	ca, okA := NetworkCAIP2(a)
	cb, okB := NetworkCAIP2(b)
	return okA && okB && ca == cb
}

// IsTestnet reports whether the network, in either naming, is a known test
// network.
func IsTestnet(id string) bool {
	n, found := lookupNetwork(id)
	return found && n.testnet
}

// EVMChainID returns the chain id of an EVM network given as eip155:<id>
// or by a known version 1 name.
func EVMChainID(id string) (uint64, bool) {
	caip2, ok := NetworkCAIP2(id)
	if !ok {
		return 0, false
	}
	ref, found := strings.CutPrefix(caip2, "eip155:")
	if !found {
		return 0, false
	}
	if ref == "" || ref[0] == '0' || ref[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseUint(ref, 10, 64)
	return n, err == nil
}
