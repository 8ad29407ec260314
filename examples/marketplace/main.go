// Command marketplace shows money that follows the verdict, with real
// payments over loopback HTTP: a buyer pays a seller with the x402
// "auth-capture" scheme (its signed authorization holds the price in the
// offline escrow before the seller works), the seller's route delivers
// its answer, and has the payment captured, only when the marketplace's
// trust service validates the answer as VALID; a bad delivery is refused
// and its hold voided, so the buyer keeps its money; a disputed delivery
// is arbitrated by the marketplace and, found wrong, refunded by the
// seller's policy. Every decision leaves a receipt, and the offline
// chain's balances show where the money went.
//
//	go run ./examples/marketplace
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// An order is what the buyer asks the seller for, and its complaint
// after delivery, if any.
type order struct {
	id, source, dispute string
}

func main() {
	os.Exit(cli(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// cli reads the command line and runs, returning the exit status: 2 for
// a usage error (the program takes no arguments), 1 for a failed run.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("marketplace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: go run ./examples/marketplace") }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "marketplace: unexpected argument %q: it takes no arguments\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if err := run(ctx, stdout); err != nil {
		fmt.Fprintln(stderr, "marketplace:", err)
		return 1
	}
	return 0
}

func run(ctx context.Context, out io.Writer) error {
	p, err := start(ctx)
	if err != nil {
		return err
	}
	defer p.close()
	payer, err := evm.NewPayer(buyerKey)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, describe("facilitator", p.chain.URL, "offline escrow: holds, captures, voids and refunds on a ledger instead of a chain"))
	fmt.Fprintln(out, describe("marketplace", p.market.URL, "trust service on 5 judges (safe tier: 3 runs)"))
	fmt.Fprintln(out, describe("seller", p.seller.URL+"/summarize", price+" in USDC on eip155:84532, held in escrow, captured on a VALID verdict only"))
	fmt.Fprintln(out, describe("buyer", payer.Address().String(), "signs auth-capture authorizations (EIP-3009)"))
	balances := p.balances(payer.Address())
	fmt.Fprintf(out, "\nbalances before: %s\n", balances())

	b := &buyer{client: &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}, seller: p.seller.URL, out: out}
	orders := []order{
		{id: "order-1", source: "Revenue rose 12% to $4.1 billion in 2025; operating margin was 18%."},
		{id: "order-2", source: "Refunds within 30 days, at most 2 a year, for orders above $50."},
		{id: "order-3", source: "Shipping takes 3 to 5 days; orders above $50 ship free.", dispute: "the summary drops that only orders above $50 ship free"},
	}
	var paid, uncharged, refunded []string
	for _, o := range orders {
		fmt.Fprintln(out)
		delivered, rcpt, err := b.buy(ctx, o, "")
		if err != nil {
			return err
		}
		if !delivered {
			fmt.Fprintf(out, "  the buyer retries with the same payment:\n")
			if _, _, err := b.buy(ctx, o, "  "); err != nil {
				return err
			}
		}
		back := false
		if o.dispute != "" {
			if back, err = p.dispute(ctx, out, o, delivered, rcpt); err != nil {
				return err
			}
		}
		switch {
		case back:
			refunded = append(refunded, o.id)
		case delivered:
			paid = append(paid, o.id)
		default:
			uncharged = append(uncharged, o.id)
		}
	}
	fmt.Fprintf(out, "\nbalances after:  %s\n", balances())
	fmt.Fprintln(out, closingLine(paid, uncharged, refunded))
	return nil
}

// closingLine says which orders the buyer paid for, and which it was not
// charged for or was refunded.
func closingLine(paid, uncharged, refunded []string) string {
	names := func(ids []string) string {
		if len(ids) == 0 {
			return "no order"
		}
		return strings.Join(ids, " and ")
	}
	line := "the buyer paid for " + names(paid)
	var rest []string
	if len(uncharged) > 0 {
		rest = append(rest, names(uncharged)+" not charged")
	}
	if len(refunded) > 0 {
		rest = append(rest, names(refunded)+" refunded")
	}
	switch {
	case len(rest) > 0 && len(paid) > 0:
		line += " only: " + strings.Join(rest, ", ")
	case len(rest) > 0:
		line += ": " + strings.Join(rest, ", ")
	}
	return line + ", as the balances show"
}

// balances returns a function that describes the balances of the buyer,
// the seller, the escrow and the escrow's operator (who funds refunds,
// as the escrow's operator refund collector draws them) on the offline
// chain.
func (p *parties) balances(buyer evm.Address) func() string {
	token, _ := evm.ParseAddress(usdc)
	seller, _ := evm.ParseAddress(sellerPayTo)
	terms, _ := evm.ParseAuthCaptureOffer(p.offer)
	return func() string {
		b := func(a evm.Address) int64 { return p.escrow.Balance(token, a).Int64() }
		return fmt.Sprintf("buyer %d, seller %d, escrow %d, operator %d", b(buyer), b(seller), b(terms.Deployment.Escrow), b(terms.Operator))
	}
}

// buyer buys summaries from the seller.
type buyer struct {
	client *http.Client
	seller string
	out    io.Writer
}

// buy orders o, paying with the proof its Transport keeps for the order
// (the order id is the Idempotency-Key), and reports whether the answer
// was delivered, and the validation's receipt id.
func (b *buyer) buy(ctx context.Context, o order, indent string) (bool, string, error) {
	body, _ := json.Marshal(map[string]string{"source": o.source})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.seller+"/summarize", bytes.NewReader(body))
	if err != nil {
		return false, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(x402.HeaderIdempotencyKey, o.id)
	req.Header.Set(trustpay.HeaderReceipt, string(receipt.DeliveryDetached))
	resp, err := b.client.Do(req)
	if err != nil {
		return false, "", fmt.Errorf("%s: %w", o.id, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, "", err
	}
	status, rcpt := resp.Header.Get(trustpay.HeaderStatus), resp.Header.Get(trustpay.HeaderReceipt)
	sr, serr := x402.SettlementFromResponse(resp)
	var e x402.EscrowReport
	if serr == nil {
		e, _ = x402.EscrowFromSettlement(sr)
	}
	if resp.StatusCode == http.StatusOK && serr == nil && sr.Success {
		var summary string
		if err := json.Unmarshal(data, &summary); err != nil {
			return false, "", fmt.Errorf("%s: the delivery is not a JSON string: %w", o.id, err)
		}
		fmt.Fprintf(b.out, "%s%s: %d, Vouch-Status %s, receipt %s\n%s  delivered: %q\n%s  escrow: %s of %s held, %s, tx %s\n",
			indent, o.id, resp.StatusCode, status, rcpt, indent, summary, indent, e.Captured, e.Held, e.State, short(sr.Transaction))
		return true, rcpt, nil
	}
	var p struct {
		Code  string `json:"code"`
		Extra struct {
			Confidence float64        `json:"confidence"`
			Evidence   trust.Evidence `json:"evidence"`
		} `json:"extra"`
	}
	if err := json.Unmarshal(data, &p); err != nil || p.Code == "" {
		// Not a problem: the seller's own refusal, say.
		fmt.Fprintf(b.out, "%s%s: %d, not delivered: %s\n", indent, o.id, resp.StatusCode, strings.TrimSpace(string(data)))
	} else {
		fmt.Fprintf(b.out, "%s%s: %d %s, Vouch-Status %s (confidence %.2f, runs %v), receipt %s\n",
			indent, o.id, resp.StatusCode, p.Code, status, p.Extra.Confidence, p.Extra.Evidence.Verdicts, rcpt)
	}
	if serr == nil && e.State == x402.EscrowVoided {
		fmt.Fprintf(b.out, "%s  escrow: the hold of %s %s, the buyer keeps its money\n", indent, e.Held, e.State)
	}
	return false, rcpt, nil
}

// dispute has the buyer ask the marketplace to arbitrate a delivery;
// when the marketplace finds the seller's answer wrong, the seller
// reports the validation's outcome wrong (its receipt rcpt), and its
// dispute policy refunds the buyer. It reports whether the buyer was
// refunded.
func (p *parties) dispute(ctx context.Context, out io.Writer, o order, delivered bool, rcpt string) (bool, error) {
	c, err := trust.NewClient(p.market.URL, trust.WithAPIKey(buyerAPI))
	if err != nil {
		return false, err
	}
	claimed, _ := json.Marshal(summaries[o.source])
	ctxJSON, _ := json.Marshal(map[string]string{"buyer": o.dispute})
	resp, err := c.Call(ctx, &trust.Request{
		Mode:   trust.ModeArbitration,
		Policy: trust.PolicySafe,
		Task:   trust.Task{Type: "summarization", Input: router.NewStringInput(o.source), Spec: trust.JSON(spec), ClaimedResult: claimed, DisputeContext: ctxJSON},
		Receipt: receipt.Request{Mode: receipt.DeliveryDetached, Visibility: receipt.VisibilityShared,
			Counterparties: []string{"seller"}, Include: receipt.Include{OutputHash: true, ConsensusSnapshot: true}},
	})
	if err != nil {
		return false, fmt.Errorf("%s: arbitration: %w", o.id, err)
	}
	var ref receipt.Ref
	if err := json.Unmarshal(resp.Receipt, &ref); err != nil {
		return false, fmt.Errorf("%s: arbitration receipt: %w", o.id, err)
	}
	outcome := "the payment stands"
	if resp.Status == trust.StatusSellerInvalid {
		outcome = "the seller reports its validation wrong"
		if !delivered {
			outcome = "nothing was captured to refund"
		}
	}
	fmt.Fprintf(out, "  dispute %q\n  arbitration: %s, confidence %.2f, %d runs; %s\n  receipt %s (shared with the seller, %s)\n",
		o.dispute, resp.Status, resp.Confidence, resp.Evidence.Launched, outcome, ref.ReceiptID, ref.TTL)
	if resp.Status != trust.StatusSellerInvalid || !delivered {
		return false, nil
	}
	refund, refunded, err := p.disputes.Feedback(trust.WithCaller(ctx, sellerCaller), rcpt, false)
	if err != nil {
		return false, fmt.Errorf("%s: refund: %w", o.id, err)
	}
	if line := refundLine(refund, refunded); line != "" {
		fmt.Fprintln(out, "  "+line)
	}
	return refunded, nil
}

// refundLine says what a dispute's refund did: the amount refunded, or
// the facilitator's refusal, when no money moved; "" when no refund was
// asked for.
func refundLine(o x402.EscrowOutcome, refunded bool) string {
	switch {
	case refunded:
		return fmt.Sprintf("refunded: %s atomic units to the buyer by the seller's policy, tx %s", o.Amount, short(o.Settlement.Transaction))
	case o.Key != "":
		reason := o.Settlement.ErrorReason
		if o.Settlement.ErrorMessage != "" {
			reason += ": " + o.Settlement.ErrorMessage
		}
		return fmt.Sprintf("refund of %s refused by the facilitator (%s): no money moved", o.Amount, reason)
	}
	return ""
}

// short abbreviates a transaction hash.
func short(tx string) string {
	if len(tx) < 14 {
		return tx
	}
	return tx[:10] + "…" + tx[len(tx)-4:]
}
