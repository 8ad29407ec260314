// Package summary writes the one-line text summaries that the A2A agent
// and the MCP tools give beside each structured answer.
package summary

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// Trust is the summary of a trust answer: its status, confidence, runs
// and agreement, the retry reason, the receipt's id and the trace id,
// such as "VALID, confidence 1.00: 3 runs, agreement 1.00; trace 4bf9…",
// and, when there are any, how many steps ran (when more than one), the
// first run that dissented from the answer and the tier a retry should
// use. The A2A agent
// and the MCP tools say the same of the same answer.
func Trust(r *trust.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, confidence %.2f: %s, agreement %.2f", r.Status, r.Confidence, Runs(r.Evidence.Redundancy), r.Evidence.Agreement)
	if n := len(r.Evidence.Steps); n > 1 {
		fmt.Fprintf(&b, " over %d steps", n)
	}
	// A dissent is from an answer some run gave: where every run is
	// among the disagreements, no answer won and none is named.
	if ds := r.Evidence.Disagreements; len(ds) > 0 && len(ds) < r.Evidence.Redundancy {
		d := ds[0]
		fmt.Fprintf(&b, "; dissent: session %d said %s", d.SessionID, d.Label)
		if d.Reason != "" {
			fmt.Fprintf(&b, " (%s)", d.Reason)
		}
	}
	if ri := r.RetryInstructions; ri != nil {
		fmt.Fprintf(&b, "; retry: %s", ri.Reason)
		if ri.Policy != "" {
			fmt.Fprintf(&b, " (policy %s)", ri.Policy)
		}
	}
	if len(r.Receipt) > 0 {
		var rc struct {
			ID string `json:"receipt_id"`
		}
		if json.Unmarshal(r.Receipt, &rc) == nil && rc.ID != "" {
			fmt.Fprintf(&b, "; receipt %s", rc.ID)
		}
	}
	fmt.Fprintf(&b, "; trace %s", r.TraceID)
	return b.String()
}

// Factcheck is the summary of a fact-check answer: its verdict (or "no
// majority"), confidence, replicas and agreement, and the first reason.
func Factcheck(r *router.FactcheckResponse) string {
	verdict := string(r.Verdict)
	if verdict == "" {
		verdict = "no majority"
	}
	s := fmt.Sprintf("%s, confidence %.2f: %s, agreement %.2f", verdict, r.Confidence, Runs(r.Consensus.Replicas), r.Consensus.Agreement)
	if len(r.Reasons) > 0 {
		s += "; " + r.Reasons[0]
	}
	return s
}

// Runs is n runs in words: "1 run", "3 runs".
func Runs(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}
