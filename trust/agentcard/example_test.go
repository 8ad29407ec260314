package agentcard_test

import (
	"fmt"

	"github.com/vouchkit/vouch/trust/agentcard"
)

// The card of a trust service at a known address: the interface a 0.3
// client reads, the interfaces a 1.0 client picks from, and the skills.
func ExampleNew() {
	card := agentcard.New(agentcard.Config{}, "https://vouch.example")
	fmt.Println(card.Name, card.URL, card.PreferredTransport, card.ProtocolVersion)
	for _, i := range card.SupportedInterfaces {
		fmt.Println(i.ProtocolVersion, i.ProtocolBinding, i.URL)
	}
	for _, s := range card.Skills {
		fmt.Println(s.ID)
	}
	// Output:
	// vouch https://vouch.example/a2a JSONRPC 0.3.0
	// 1.0 JSONRPC https://vouch.example/a2a
	// 0.3 JSONRPC https://vouch.example/a2a
	// validate_claim
	// delegate_task
	// arbitrate
	// factcheck
}
