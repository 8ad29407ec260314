package x402

import (
	"context"
	"fmt"
)

// SchemeUpto is the scheme that authorizes a transfer of up to the
// offer's amount and settles the amount actually used, at most that
// (the x402 "upto" scheme; on EVM networks a Permit2 authorization, see
// package evm).
//
// An "upto" offer's Amount is the most the payer authorizes. The server
// asks the facilitator to verify with the offer as given, and to settle
// with the same offer whose Amount is the amount to charge: the amount
// is phase-dependent, as the scheme's specification has it. A settlement
// of zero moves nothing and consumes the authorization.
const SchemeUpto = "upto"

// FacilitatorAddress returns the address f settles "upto" payments as on
// network: the extra.facilitatorAddress of the "upto" kind its Supported
// lists for that network, which an "upto" offer must carry so that payers
// bind it into their authorization.
func FacilitatorAddress(ctx context.Context, f Facilitator, network string) (string, error) {
	s, err := f.Supported(ctx)
	if err != nil {
		return "", err
	}
	for _, k := range s.Kinds {
		if k.Scheme == SchemeUpto && SameNetwork(k.Network, network) {
			if a, _ := k.Extra["facilitatorAddress"].(string); a != "" {
				return a, nil
			}
		}
	}
	return "", fmt.Errorf("x402: the facilitator lists no %q kind with a facilitatorAddress on %q", SchemeUpto, network)
}
