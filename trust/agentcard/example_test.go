package agentcard_test

import (
	"fmt"

	"github.com/vouchkit/vouch/trust/agentcard"
)

// The card of a trust service at a known address, and its skills.
func ExampleNew() {
	card := agentcard.New(agentcard.Config{}, "https://vouch.example")
	fmt.Println(card.Name, card.URL, card.PreferredTransport, card.ProtocolVersion)
	for _, s := range card.Skills {
		fmt.Println(s.ID)
	}
	// Output:
	// vouch https://vouch.example/a2a JSONRPC 0.3.0
	// validate_claim
	// delegate_task
	// arbitrate
	// factcheck
}
