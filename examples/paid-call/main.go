// Command paid-call calls an HTTP endpoint protected by x402 and pays for
// it: on a 402 answer it signs an "exact" EVM payment (EIP-3009, as USDC
// takes it), or with -schemes upto an "upto" one (Permit2), within the
// limits given, sends the request again with the proof, and prints the
// status, the response body and the decoded settlement (that of the
// answer which redirected to the result, when the server settled and
// then redirected). It works with any x402 server, version 1 or 2; by
// default it calls the validate v2 route of the local demo server
// (examples/server).
//
//	go run ./examples/paid-call [-url URL] [-key HEX] [-max PRICE] [-data JSON] [-method POST]
//
// The key is a hex secp256k1 private key, from -key or the environment
// variable VOUCH_X402_KEY. For a server on a loopback address only, it
// falls back to the publicly known first development key of Hardhat and
// Anvil, which the offline facilitator of the demo server accepts. Never
// put money on that key's address.
//
// The exit status is 0 for an answer below 400, 1 for any other answer or
// a payment that was refused, and 2 for a usage error.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

const (
	// envKey names the environment variable read when -key is not set.
	envKey = "VOUCH_X402_KEY"
	// demoKey is the first account key of the Hardhat and Anvil
	// development chains (address 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266):
	// published everywhere, so worthless, and used only against loopback.
	demoKey = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

	defaultURL  = "http://127.0.0.1:8080/api/v2/x402/validate"
	defaultData = `{"session_id":1,"request_id":"paid-call","claim":{"type":"tool_output","description":"calculator: 17 * 3","output":"17 * 3 = 51"},"policy":{"rules":["consistency"]}}`
	// usdcDecimals converts -max into atomic units.
	usdcDecimals = 6
)

// knownSchemes are the x402 schemes the EVM payer signs.
var knownSchemes = []string{x402.SchemeExact, x402.SchemeUpto, x402.SchemeAuthCapture}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// run makes the call and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("paid-call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", defaultURL, "x402-protected `URL` to call")
	key := fs.String("key", "", "hex private `KEY` that pays (default $"+envKey+"; for a loopback URL only, the public development key)")
	maxPrice := fs.String("max", "$0.01", "most to pay for the call, in whole units of the token (USDC: dollars)")
	data := fs.String("data", defaultData, "request `JSON` body; empty sends none")
	method := fs.String("method", http.MethodPost, "HTTP `METHOD`")
	networks := fs.String("network", "base-sepolia", "comma-separated networks it may pay on (names or CAIP-2 ids), or \"any\" for any known test network (x402.Policy's safe default: mainnets must be named)")
	schemes := fs.String("schemes", x402.SchemeExact, "comma-separated x402 schemes it may pay: exact, upto, auth-capture (for upto, -max bounds the maximum it authorizes; for auth-capture, the amount held)")
	timeout := fs.Duration("timeout", 30*time.Second, "time limit of the whole call")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./examples/paid-call [flags]")
		fmt.Fprintln(stderr, "\nCalls an x402-protected endpoint, pays within -max, and prints the status, body and settlement.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "paid-call: "+format+"\n", a...)
		return 2
	}

	u, err := url.Parse(*target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usage("-url %q is not an absolute http or https URL", *target)
	}
	hexKey, keyFrom := *key, "-key"
	if hexKey == "" {
		hexKey, keyFrom = getenv(envKey), envKey
	}
	if hexKey == "" {
		if !loopback(u.Hostname()) {
			return usage("set -key or %s: the public development key pays only loopback servers", envKey)
		}
		hexKey = demoKey
	}
	payer, err := evm.NewPayer(hexKey)
	if err != nil {
		return usage("%s: %v", keyFrom, err)
	}
	if *timeout <= 0 {
		return usage("-timeout %v: want a positive duration", *timeout)
	}
	units, err := x402.ParsePrice(*maxPrice, usdcDecimals)
	if err != nil {
		return usage("-max: %v", err)
	}
	maxUnits, err := x402.ParseAmount(units)
	if err != nil {
		return usage("-max: %v", err)
	}
	var body io.Reader
	if *data != "" {
		if !json.Valid([]byte(*data)) {
			return usage("-data is not valid JSON")
		}
		body = strings.NewReader(*data)
	}
	policy := x402.Policy{MaxAmount: maxUnits, Schemes: list(*schemes)}
	if len(policy.Schemes) == 0 {
		return usage("-schemes %q names no scheme", *schemes)
	}
	for _, s := range policy.Schemes {
		if !slices.Contains(knownSchemes, s) {
			return usage("-schemes: unknown scheme %q (want %s)", s, strings.Join(knownSchemes, ", "))
		}
	}
	if *networks != "any" {
		if policy.Networks = list(*networks); len(policy.Networks) == 0 {
			return usage("-network %q names no network", *networks)
		}
		for _, n := range policy.Networks {
			if _, ok := x402.NetworkCAIP2(n); !ok {
				return usage("-network: unknown network %q (want a name such as base-sepolia or base, a CAIP-2 id such as eip155:84532, or any)", n)
			}
		}
	}

	budget := x402.NewBudget(maxUnits)
	signer := &recordingPayer{Payer: payer}
	hc := &http.Client{Transport: &x402.Transport{Payer: signer, Policy: policy, Budget: budget}}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *method == "" {
		// net/http would send it as GET.
		return usage("-method %q: name an HTTP method, such as POST", *method)
	}
	req, err := http.NewRequestWithContext(ctx, *method, u.String(), body)
	if err != nil {
		return usage("-method %q: %v", *method, err) // the URL was checked above
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	fmt.Fprintf(stdout, "payer:  %s (pays at most %s, %d atomic units)\n", payer.Address(), *maxPrice, maxUnits)
	resp, err := hc.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "paid-call: %s\n", oneLine(err))
		var pe *x402.PaymentError
		switch {
		case errors.As(err, &pe):
			fmt.Fprintf(stderr, "paid-call: payment %s may have been made: reference %s\n", pe.ID, pe.Reference)
		case budget.Spent() > 0:
			// A request before the one that failed carried the proof:
			// one the server redirected, say.
			for _, ref := range signer.references() {
				fmt.Fprintf(stderr, "paid-call: a payment sent before the call failed may have been made: reference %s\n", ref)
			}
		}
		return 1
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, 10<<20))
	if err != nil {
		fmt.Fprintf(stderr, "paid-call: reading the response: %s\n", oneLine(err))
		return 1
	}

	fmt.Fprintf(stdout, "status: %s\n", resp.Status)
	if spent := budget.Spent(); spent > 0 {
		fmt.Fprintf(stdout, "payment: signed for %d atomic units (settled only if the settlement says so)\n", spent)
	} else {
		fmt.Fprintln(stdout, "payment: none asked")
	}
	fmt.Fprintf(stdout, "body:\n%s\n", indent(respBody))
	settlement, from, err := settlementOf(resp)
	switch {
	case errors.Is(err, x402.ErrNoSettlement):
		fmt.Fprintln(stdout, "settlement: none")
	case err != nil:
		fmt.Fprintf(stdout, "settlement: unreadable: %v\n", err)
	default:
		s, _ := json.MarshalIndent(settlement, "", "  ")
		if from != resp {
			fmt.Fprintf(stdout, "settlement (of the %s answer that redirected the call):\n%s\n", from.Status, s)
		} else {
			fmt.Fprintf(stdout, "settlement:\n%s\n", s)
		}
	}
	if resp.StatusCode >= 400 {
		return 1
	}
	return 0
}

// recordingPayer is an evm.Payer that keeps the reference of each proof
// it signs, so that a payment sent by a request before the one that
// failed can be named.
type recordingPayer struct {
	*evm.Payer
	mu   sync.Mutex
	refs []string
}

// Pay signs offer, as the evm.Payer does, and keeps the proof's reference.
func (p *recordingPayer) Pay(ctx context.Context, offer x402.PaymentRequirements) (x402.Proof, error) {
	proof, err := p.Payer.Pay(ctx, offer)
	if err == nil {
		p.mu.Lock()
		p.refs = append(p.refs, proof.Reference)
		p.mu.Unlock()
	}
	return proof, err
}

// references returns the references of the proofs signed so far.
func (p *recordingPayer) references() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.refs)
}

// settlementOf returns the settlement resp reports, or else the latest
// one an answer that redirected to it reported, with the answer that
// reports it: a server may settle a paid request and redirect to its
// result, and the http.Client follows the redirect. It returns an error
// wrapping x402.ErrNoSettlement when none reports one.
func settlementOf(resp *http.Response) (*x402.SettleResponse, *http.Response, error) {
	for r := resp; r != nil; r = r.Request.Response {
		s, err := x402.SettlementFromResponse(r)
		if !errors.Is(err, x402.ErrNoSettlement) {
			return s, r, err
		}
		if r.Request == nil {
			break
		}
	}
	return nil, nil, x402.ErrNoSettlement
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// oneLine returns the message of err on one line: the errors it joins
// (a refusal of each offer, say) are separated by "; ".
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// indent returns JSON indented, and anything else as it is.
func indent(data []byte) string {
	var b bytes.Buffer
	if json.Indent(&b, data, "", "  ") != nil {
		return string(data)
	}
	return b.String()
}

// list splits a comma-separated flag, each item with its spaces trimmed
// and empty items dropped.
func list(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
