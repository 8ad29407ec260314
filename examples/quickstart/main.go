// Command quickstart runs vouch in-process, with no network and no set-up:
// an engine of five demo sessions, and the trust service on top of it. It
// makes one call per mode, compares the fast, oracle and adaptive tiers on
// the same claims, issues a signed receipt that it fetches back and
// verifies, shows what an engine with reputation on (the default) learns
// of its sessions, and how the outcomes a host reports calibrate the
// confidence a call states.
//
//	go run ./examples/quickstart        readable output
//	go run ./examples/quickstart -json  every response as JSON
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

const article = "Marie Curie won the Nobel Prize in Physics in 1903 with Pierre Curie. She won a second Nobel Prize, in Chemistry, in 1911."

func main() {
	os.Exit(cli(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// cli reads the command line and runs, returning the exit status: 2 for
// a usage error, 1 for a failed run.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print every response as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./examples/quickstart [-json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quickstart: unexpected argument %q: it takes no arguments, only the flag -json\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if err := run(ctx, stdout, *asJSON); err != nil {
		fmt.Fprintln(stderr, "quickstart:", err)
		return 1
	}
	return 0
}

func run(ctx context.Context, out io.Writer, asJSON bool) error {
	// Five sessions in two worker pools: four careful workers and one
	// sloppy one that approves every claim. Reputation is off, so that
	// every vote counts the same and each confidence below is the
	// consensus.Posterior of the votes printed beside it; with it on (the
	// default), the engine would learn to run the sloppy session last and
	// weigh its vote less (docs/INTERFACE.md, 6.5).
	engine, err := router.NewEngine(routertest.Sessions(1, 2, careful(), careful(), sloppy(), careful(), careful()),
		router.WithReputation(nil))
	if err != nil {
		return err
	}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	signer, err := receipt.NewEd25519Signer(key)
	if err != nil {
		return err
	}
	store := &receipt.MemStore{}
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: store}), trust.WithSignedReceipts())
	if err != nil {
		return err
	}
	p := printer{out: out, json: asJSON, titled: new(bool)}

	p.title("One call per mode (safe tier: 3 replicas)")
	for _, c := range []struct {
		label string
		req   *trust.Request
	}{
		{"delegation: summarize the article", &trust.Request{Mode: trust.ModeDelegation, Policy: trust.PolicySafe,
			Task: trust.Task{Type: "summarization", Input: router.NewStringInput(article), Spec: json.RawMessage(`"Summarize in one sentence."`)}}},
		{"validation: \"Curie won the prize with Pierre Curie.\"", claim(trust.ModeValidation, trust.PolicySafe, "Curie won the prize with Pierre Curie.")},
		{"arbitration: the seller delivered \"Curie shared the prize with Albert Einstein.\"", claim(trust.ModeArbitration, trust.PolicySafe, "Curie shared the prize with Albert Einstein.")},
	} {
		resp, err := svc.Call(ctx, c.req)
		if err != nil {
			return err
		}
		p.response(c.label, resp)
	}

	p.title("Tiers on the same claims: what each spends")
	for _, text := range []string{
		"Curie won the prize in Physics.",
		"The second prize that Curie won, in Chemistry, came in 1911 with Albert Einstein.",
	} {
		p.line("claim %q", text)
		for _, tier := range []trust.Policy{trust.PolicyFast, trust.PolicyOracle, trust.PolicyAdaptive} {
			resp, err := svc.Call(ctx, claim(trust.ModeValidation, tier, text))
			if err != nil {
				return err
			}
			p.tier(tier, resp)
		}
	}

	p.title("A signed receipt, fetched back and verified")
	req := claim(trust.ModeValidation, trust.PolicySafe, "Curie won the prize with Pierre Curie.")
	req.Receipt = receipt.Request{Mode: receipt.DeliveryInline, TTL: "30d", Include: receipt.Include{
		ConsensusSnapshot: true, PolicySnapshot: true, InputHash: true, OutputHash: true, RouterTraceRefs: true}}
	resp, err := svc.Call(ctx, req)
	if err != nil {
		return err
	}
	issued, err := receipt.Parse(resp.Receipt)
	if err != nil {
		return err
	}
	rec, err := receipt.Fetch(ctx, store, issued.ReceiptID, trust.DefaultCaller, time.Now())
	if err != nil {
		return fmt.Errorf("fetching the receipt back: %w", err)
	}
	verifier, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		return err
	}
	inputJSON, _ := json.Marshal(article)
	result, err := verifier.Verify(rec.Data, receipt.Originals{Input: inputJSON, Output: req.Task.ClaimedResult}, time.Now())
	if err != nil && result == nil {
		return err
	}
	p.receipt(resp, issued, rec.Data, result)
	if !result.Valid() {
		return fmt.Errorf("the receipt did not verify: %v", err)
	}
	return learn(ctx, p)
}

// learn runs the same sessions on an engine with reputation on, the
// default: the host reports the outcome of a few safe validations, whose
// truth it knows (the first and third claims hold, the others do not),
// and the engine learns from them that session 3 approves everything,
// runs it last and weighs its vote less. Agreement alone would teach it
// nothing about any session.
func learn(ctx context.Context, p printer) error {
	p.title("Reputation on (the default): what the engine learns")
	engine, err := router.NewEngine(routertest.Sessions(1, 2, careful(), careful(), sloppy(), careful(), careful()))
	if err != nil {
		return err
	}
	svc, err := trust.New(engine)
	if err != nil {
		return err
	}
	claims := []string{
		"Curie won the prize in Physics.",
		"Curie shared the prize with Albert Einstein.",
		"Curie won the prize with Pierre Curie.",
		"The second prize that Curie won, in Chemistry, came in 1911 with Albert Einstein.",
	}
	holds := []bool{true, false, true, false}
	const calls = 20
	for i := range calls {
		resp, err := svc.Call(ctx, claim(trust.ModeValidation, trust.PolicySafe, claims[i%len(claims)]))
		if err != nil {
			return err
		}
		if err := svc.Feedback(ctx, resp.TraceID, (resp.Status == trust.StatusValid) == holds[i%len(claims)]); err != nil {
			return err
		}
	}
	ids := []int64{1, 2, 3, 4, 5}
	rel, err := engine.Reputation().Reliabilities(ctx, router.Scope(router.KindValidate, "qa"), ids)
	if err != nil {
		return err
	}
	p.line("after %d safe validations, their outcomes reported, each session's learned chance of voting right:", calls)
	for _, id := range ids {
		p.line("  session %d  %.2f", id, rel.Of(id))
	}
	resp, err := svc.Call(ctx, claim(trust.ModeValidation, trust.PolicyAdaptive, claims[3]))
	if err != nil {
		return err
	}
	p.line("claim %q", claims[3])
	p.weighted(trust.PolicyAdaptive, resp, rel)
	return calibrate(ctx, p, svc, engine, claims)
}

// calibrate has the host audit adaptive calls of the claims, whose truth
// it knows (the first and third hold, the others do not), and report
// each outcome (trust.Service.Feedback, by the call's trace id); the
// reports calibrate adaptive's maps, one per verdict, and the last
// claim's confidence is read on its map, recomputed from the response.
func calibrate(ctx context.Context, p printer, svc *trust.Service, engine *router.Engine, claims []string) error {
	p.title("Outcomes reported: the confidence calibrated")
	holds := []bool{true, false, true, false}
	const audited = 12
	right := 0
	for i := range audited {
		resp, err := svc.Call(ctx, claim(trust.ModeValidation, trust.PolicyAdaptive, claims[i%len(claims)]))
		if err != nil {
			return err
		}
		ok := (resp.Status == trust.StatusValid) == holds[i%len(claims)]
		if ok {
			right++
		}
		if err := svc.Feedback(ctx, resp.TraceID, ok); err != nil {
			return err
		}
	}
	p.line("the host audited %d adaptive calls and reported each outcome: %d right, %d wrong", audited, right, audited-right)
	rel, err := engine.Reputation().Reliabilities(ctx, router.Scope(router.KindValidate, "qa"), []int64{1, 2, 3, 4, 5})
	if err != nil {
		return err
	}
	resp, err := svc.Call(ctx, claim(trust.ModeValidation, trust.PolicyAdaptive, claims[3]))
	if err != nil {
		return err
	}
	p.line("claim %q again", claims[3])
	p.weighted(trust.PolicyAdaptive, resp, rel)
	if c := resp.Evidence.Calibration; c != nil && !p.json {
		for _, pt := range c.Points {
			p.line("            map point: score %.3f, rate %.3f, %g outcomes", pt.Score, pt.Rate, pt.Outcomes)
		}
		p.line("            recomputed from the response: reputation.Interpolate(points, %.3f) = %.3f", c.Uncalibrated, c.Read())
	}
	return nil
}

// claim returns a request to judge text as a claim about the article.
func claim(mode trust.Mode, policy trust.Policy, text string) *trust.Request {
	out, _ := json.Marshal(text)
	req := &trust.Request{Mode: mode, Policy: policy, Task: trust.Task{
		Type: "qa", Input: router.NewStringInput(article), ClaimedResult: out,
	}}
	if mode == trust.ModeArbitration {
		req.Task.DisputeContext = json.RawMessage(`{"buyer":"Einstein never shared a prize with Curie"}`)
	}
	return req
}

// printer writes the quickstart's output, readable or as JSON.
type printer struct {
	out    io.Writer
	json   bool
	titled *bool // a section has begun: the next title follows a blank line
}

func (p printer) title(s string) {
	if p.json {
		return
	}
	if *p.titled {
		fmt.Fprintln(p.out)
	}
	*p.titled = true
	fmt.Fprintf(p.out, "== %s\n", s)
}

func (p printer) line(format string, args ...any) {
	if !p.json {
		fmt.Fprintf(p.out, "  "+format+"\n", args...)
	}
}

func (p printer) dump(v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(p.out, "%s\n", b)
}

func (p printer) response(label string, r *trust.Response) {
	if p.json {
		p.dump(r)
		return
	}
	fmt.Fprintf(p.out, "  %s\n    status %-15s confidence %.2f  runs %d  agreement %.2f\n",
		label, r.Status, r.Confidence, r.Evidence.Launched, r.Evidence.Agreement)
	fmt.Fprintf(p.out, "    result %s\n", r.Result)
	for _, d := range r.Evidence.Disagreements {
		fmt.Fprintf(p.out, "    dissent: session %d said %s (%s)\n", d.SessionID, d.Label, d.Reason)
	}
}

func (p printer) tier(tier trust.Policy, r *trust.Response) {
	if p.json {
		p.dump(r)
		return
	}
	// The votes for the leading answer and against it: the confidence is
	// consensus.Posterior of these two counts, and can be checked by hand.
	count := map[router.Label]int{}
	answered := 0
	for _, l := range r.Evidence.Verdicts {
		if l != router.LabelCancelled && l != router.LabelError && l != router.LabelTimeout {
			count[l]++
			answered++
		}
	}
	lead := 0
	for _, n := range count {
		lead = max(lead, n)
	}
	fmt.Fprintf(p.out, "    %-9s %-8s confidence %.2f  runs %d  votes %d–%d  (Posterior(%d, %d) = %.4f)\n",
		tier, r.Status, r.Confidence, r.Evidence.Launched, lead, answered-lead,
		lead, answered-lead, consensus.Posterior(lead, answered-lead))
	if r.RetryInstructions != nil {
		fmt.Fprintf(p.out, "              retry: %s\n", r.RetryInstructions.Reason)
	}
}

// weighted prints a call weighed by reputation: the sessions it ran, in
// order, each with its vote and the reliability it was weighed with.
func (p printer) weighted(tier trust.Policy, r *trust.Response, rel consensus.Reliabilities) {
	if p.json {
		p.dump(r)
		return
	}
	fmt.Fprintf(p.out, "    %-9s %-8s confidence %.3f  runs %d\n", tier, r.Status, r.Confidence, r.Evidence.Launched)
	if c := r.Evidence.Calibration; c != nil {
		fmt.Fprintf(p.out, "              calibration: %s on %g outcomes of map %s (weighted %.3f, conservative %.3f)\n", c.Basis, c.Outcomes, c.Tier, c.Uncalibrated, c.Conservative)
	}
	i := 0
	for _, st := range r.Evidence.Steps {
		for _, id := range st.Sessions {
			if i < len(r.Evidence.Verdicts) {
				fmt.Fprintf(p.out, "              session %d voted %-9s (reliability %.2f)\n", id, r.Evidence.Verdicts[i], rel.Of(int64(id)))
			}
			i++
		}
	}
}

func (p printer) receipt(r *trust.Response, issued *receipt.Receipt, stored []byte, res *receipt.Result) {
	if p.json {
		p.dump(r)
		p.dump(receipt.NewVerifyResponse(res))
		return
	}
	fmt.Fprintf(p.out, "  receipt %s  status %s  ttl %s  visibility %s\n",
		issued.ReceiptID, issued.Decision.Status, issued.TTL, issued.Visibility)
	fmt.Fprintf(p.out, "  signed by %s (%s)\n", issued.Signing.Issuer, issued.Signing.SignatureScheme)
	fmt.Fprintf(p.out, "  fetched back from the store: %d bytes, identical to the response: %v\n",
		len(stored), string(stored) == string(r.Receipt))
	for _, c := range res.Checks {
		fmt.Fprintf(p.out, "  check %-12s %s\n", c.Name, c.Status)
	}
}
