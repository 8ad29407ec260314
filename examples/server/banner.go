package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// printBanner tells a newcomer where the server is and what to paste.
// Its first line names the base URL; a line "  debug vars: URL" names the
// debug endpoint when there is one. It prints the API key of -api-key
// (the demo key by default), never one from VOUCH_API_KEY: its curls then
// read the key from that variable.
func printBanner(w io.Writer, base, debugBase string, cfg config, s *server) {
	var b strings.Builder
	auth := fmt.Sprintf("-H 'Authorization: Bearer %s'", cfg.apiKey)
	fmt.Fprintf(&b, "vouch demo server listening on %s\n", base)
	if cfg.apiKeyFromEnv {
		auth = fmt.Sprintf(`-H "Authorization: Bearer $%s"`, envAPIKey)
		fmt.Fprintf(&b, "  API key: set by %s (send Authorization: Bearer KEY), integration %s\n", envAPIKey, defaultIntegration)
	} else {
		fmt.Fprintf(&b, "  API key: %s (send Authorization: Bearer %s), integration %s\n", cfg.apiKey, cfg.apiKey, defaultIntegration)
	}
	if len(cfg.integrations) > 1 {
		var others []string
		for name := range maps.Values(cfg.integrations) {
			if name != defaultIntegration {
				others = append(others, name)
			}
		}
		slices.Sort(others)
		fmt.Fprintf(&b, "  other integrations: %s\n", strings.Join(others, ", "))
	}
	fmt.Fprintf(&b, "  %s\n", s.sessions)
	fmt.Fprintf(&b, "  state: %s\n", s.state.where)
	fmt.Fprintf(&b, "  receipts signed by %s (%s)\n", s.key.signer.Issuer(), s.key.origin)
	if debugBase != "" {
		fmt.Fprintf(&b, "  debug vars: %s/debug/vars\n", debugBase)
		fmt.Fprintf(&b, "  metrics: %s/metrics (Prometheus); health: %s/healthz, %s/readyz\n", debugBase, base, base)
	}
	if cfg.metricsAddr != "" {
		fmt.Fprintf(&b, "  metrics alone: http://%s/metrics (Prometheus)\n", cfg.metricsAddr)
	}

	fmt.Fprintf(&b, "\na v3 validate:\n  curl -s %s/api/v3/validate %s -H 'Content-Type: application/json' \\\n", base, auth)
	fmt.Fprintf(&b, "    -d '{\"claim\":{\"type\":\"tool_output\",\"output\":\"17 * 3 = 51\"},\"consensus\":{\"replicas\":3}}'\n")
	fmt.Fprintf(&b, "a trust validation with a signed receipt, then the receipt and its log proof, checked offline\n(paste the lines in order in the repository's directory, where go run finds ./examples/verify-receipt;\n they write trust.json, receipt.json and proof.json there):\n")
	fmt.Fprintf(&b, "  curl -s %s/api/v4/trust %s -H 'Content-Type: application/json' \\\n", base, auth)
	fmt.Fprintf(&b, "    -d '{\"mode\":\"validation\",\"policy\":\"safe\",\"task\":{\"type\":\"tool_output\",\"claimed_result\":\"17 * 3 = 51\"},\"receipt\":{\"mode\":\"detached\",\"include\":{\"policy_snapshot\":true,\"consensus_snapshot\":true,\"output_hash\":true}}}' > trust.json\n")
	fmt.Fprintf(&b, "  RECEIPT_ID=$(grep -o '\"receipt_id\":\"[^\"]*\"' trust.json | head -n 1 | cut -d '\"' -f 4)\n")
	fmt.Fprintf(&b, "  curl -s %s/api/v4/receipt/$RECEIPT_ID %s > receipt.json\n", base, auth)
	fmt.Fprintf(&b, "  curl -s %s/api/v4/receipt/$RECEIPT_ID/proof %s > proof.json\n", base, auth)
	fmt.Fprintf(&b, "  go run ./examples/verify-receipt -key %s receipt.json -proof proof.json\n", s.key.signer.Issuer())
	fmt.Fprintf(&b, "the log's checkpoint (%s):\n  curl -s %s/api/v4/log %s\n", s.log.Origin(), base, auth)

	if len(s.prices) > 0 {
		o := s.prices[0].offer
		fmt.Fprintf(&b, "\nx402 (offline facilitator: signatures are checked, nothing moves on chain):\n")
		fmt.Fprintf(&b, "  network %s (%s), asset %s (%s), payTo %s\n", o.Network, network, o.Asset,
			o.ExtraString("name"), o.PayTo)
		for _, p := range s.prices {
			fmt.Fprintf(&b, "  %-4s %-24s %s (%s atomic units)\n", p.method, p.path, p.price, p.offer.Amount)
		}
		fmt.Fprintf(&b, "  (adaptive trust calls: %s a run with the upto scheme, 5 runs authorized, the runs launched settled)\n", trustRunPrice)
		fmt.Fprintf(&b, "  (trust calls in escrow too: auth-capture, held in the offline escrow before the call, captured when VALID or INVALID, voided otherwise;\n   a buyer's balance there: curl -s %s/x402/escrow/balance/ADDRESS)\n", base)
		fmt.Fprintf(&b, "  pay for one: go run ./examples/paid-call -url %s/api/v2/x402/validate\n", base)
	}
	fmt.Fprint(w, b.String())
}
