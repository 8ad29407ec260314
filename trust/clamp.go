package trust

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vouchkit/vouch/receipt"
)

// ReceiptClamp is one term of a receipt request that the service narrowed
// because it asked for more than the receipt environment grants (a longer
// retention, a wider visibility). The call succeeds all the same; the
// receipt records the effective value.
type ReceiptClamp struct {
	// Field is the request member: "receipt.ttl" or "receipt.visibility".
	Field string `json:"field"`
	// Requested is the value asked for, such as "1000d" or "public".
	Requested string `json:"requested"`
	// Effective is the value the receipt records, such as "90d" or
	// "shared".
	Effective string `json:"effective"`
	// Reason says why, naming the environment's limit.
	Reason string `json:"reason"`
}

// receiptClamps lists the terms of asked that the receipt r records
// narrower, under env (the zero Environment is production's).
func receiptClamps(env receipt.Environment, asked receipt.Request, r *receipt.Receipt) []ReceiptClamp {
	if env == (receipt.Environment{}) {
		env = receipt.ProductionEnvironment()
	}
	name := "this environment"
	if env.Name != "" {
		name = "the " + env.Name + " environment"
	}
	var out []ReceiptClamp
	if days(asked.TTL) > days(r.TTL) {
		out = append(out, ReceiptClamp{Field: "receipt.ttl", Requested: asked.TTL, Effective: r.TTL,
			Reason: fmt.Sprintf("%s keeps receipts at most %s", name, r.TTL)})
	}
	if asked.Visibility != "" && asked.Visibility != r.Visibility {
		reason := fmt.Sprintf("%s grants at most %s visibility", name, r.Visibility)
		if asked.Visibility == receipt.VisibilityPublic {
			reason = "public visibility is a future mode, not yet granted; " + reason
		}
		out = append(out, ReceiptClamp{Field: "receipt.visibility", Requested: string(asked.Visibility), Effective: string(r.Visibility), Reason: reason})
	}
	return out
}

// days reads a ttl of the form "<n>d"; anything else counts as 0.
func days(ttl string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(ttl, "d"))
	if err != nil || !strings.HasSuffix(ttl, "d") {
		return 0
	}
	return n
}
