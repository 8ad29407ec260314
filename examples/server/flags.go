package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/x402/evm"
)

// Defaults of the flags.
const (
	defaultAddr   = "127.0.0.1:8080"
	defaultAPIKey = "demo-key"
	// defaultIntegration names the integration of -api-key: it owns the
	// receipts of the calls made with that key.
	defaultIntegration = "demo"
	// defaultPayTo is the burn address: demo payments name a recipient
	// that nobody owns.
	defaultPayTo = "0x000000000000000000000000000000000000dEaD"
	// defaultSlowSession is how long demo session 2 takes to answer.
	defaultSlowSession = 1500 * time.Millisecond
	// The environment variables that stand for the flags holding secrets
	// when those are not given: a command line is readable by every local
	// user (/proc/PID/cmdline), a process's environment by its user only.
	envAPIKey       = "VOUCH_API_KEY"
	envIntegrations = "VOUCH_INTEGRATIONS"
	envDatabaseURL  = "VOUCH_DATABASE_URL"
	// network is where the x402 routes ask to be paid. The offline
	// facilitator accepts test networks only.
	network = "base-sepolia"
	// The trial limit: router.DefaultTrialRate (ten a minute) in bursts of
	// router.DefaultTrialBurst.
	defaultTrialPerMinute = 10
	defaultTrialBurst     = router.DefaultTrialBurst
)

// config is what the flags set.
type config struct {
	addr             string
	apiKey           string
	apiKeyFromEnv    bool              // apiKey came from VOUCH_API_KEY: the banner does not print it
	integrations     map[string]string // API key → integration name, -api-key's included
	payTo            string
	signingKey       string        // file of the receipts' signing key; empty: a key for this run only
	rotateSigningKey bool          // retire the key of signingKey and add a new one
	trustedKeys      string        // file to write the public keys to; empty: none
	logOrigin        string        // name of the receipts' transparency log
	receipts         string        // bbolt file of the receipts; empty: memory (or the database)
	escrowLedger     string        // bbolt file of the escrowed payments; empty: memory (or the database)
	reputationFile   string        // bbolt file of the sessions' reputation; empty: memory (or the database)
	workers          string        // panel file; empty: the demo workers
	slowSession      time.Duration // how long demo session 2 takes to answer
	databaseURL      string
	databaseURLFrom  string // -database-url, or VOUCH_DATABASE_URL when it set databaseURL: errors name it
	schema           string
	trialRate        rate.Limit
	trialBurst       int
	debugAddr        string
	debugCallIDs     int // call ids /debug/vars counts executions by
	metricsAddr      string
	mcpStdio         bool // serve the MCP tools on stdin and stdout instead of listening
	mcpPaid          bool // the MCP tools that run workers take x402 payments
	facilitator      bool // serve the offline facilitator at facilitatorPath
	trustedProxies   []netip.Prefix
	publicURL        string // base URL the agent card announces; empty: each request's

	// chain is the offline escrow the "auth-capture" payments are held
	// in; nil means a new one. It is no flag: tests give two runs of the
	// server one chain, as a chain outlives the servers paid on it.
	chain *evm.Escrow
}

// prefixFlag collects -trusted-proxy CIDR (or a bare address).
type prefixFlag []netip.Prefix

func (f *prefixFlag) String() string { return "" }

func (f *prefixFlag) Set(s string) error {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		a, aerr := netip.ParseAddr(s)
		if aerr != nil {
			return fmt.Errorf("want a CIDR prefix or an address: %w", err)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	*f = append(*f, p.Masked())
	return nil
}

// integrationFlag collects -integration NAME=KEY.
type integrationFlag [][2]string

func (f *integrationFlag) String() string { return "" }

func (f *integrationFlag) Set(s string) error {
	name, key, ok := strings.Cut(s, "=")
	if !ok || name == "" || key == "" {
		return errors.New("want NAME=KEY, both non-empty")
	}
	*f = append(*f, [2]string{name, key})
	return nil
}

// parseIntegrations reads the value of VOUCH_INTEGRATIONS: NAME=KEY pairs,
// as -integration takes them, separated by commas or newlines, each
// trimmed of white space; empty entries are skipped. A bearer token holds
// no comma, newline or white space, so the split is unambiguous.
func parseIntegrations(v string) (integrationFlag, error) {
	var f integrationFlag
	n := 0
	for entry := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == ',' || r == '\n' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		n++
		if err := f.Set(entry); err != nil {
			// Named by position: an entry without "=" may be a key.
			return nil, fmt.Errorf("%s: entry %d: %w", envIntegrations, n, err)
		}
	}
	return f, nil
}

// unsendableKey says why an API key is refused, without quoting it.
const unsendableKey = "the key has white space at an end or a control character, which no Authorization header carries"

// sendableKey reports whether a client can send key as a bearer token: a
// server trims the token of white space, and a header holds no control
// character.
func sendableKey(key string) bool {
	return key == strings.TrimSpace(key) && !strings.ContainsFunc(key, unicode.IsControl)
}

// parseFlags reads the command line, and through getenv the environment
// variables that stand for -api-key, -integration and -database-url when
// those are not given. -h prints the usage to out and returns
// flag.ErrHelp.
func parseFlags(args []string, getenv func(string) string, out io.Writer) (config, error) {
	var (
		cfg          config
		integrations integrationFlag
		perMinute    float64
	)
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.addr, "addr", defaultAddr, "`HOST:PORT` to listen on (port 0 picks a free one)")
	fs.StringVar(&cfg.apiKey, "api-key", defaultAPIKey,
		"`KEY` that normal routes take as Authorization: Bearer KEY, for the integration "+defaultIntegration+"; "+envAPIKey+" sets it when the flag is not given")
	fs.Var(&integrations, "integration",
		"another integration and its API key, as `NAME=KEY` (repeatable); each owns its receipts and can be named a counterparty. "+envIntegrations+" gives them, NAME=KEY separated by commas or newlines, when the flag is not given")
	fs.StringVar(&cfg.payTo, "pay-to", defaultPayTo, "EVM `ADDRESS` that receives the x402 payments")
	signingFlags(fs, &cfg)
	logFlags(fs, &cfg)
	fs.StringVar(&cfg.receipts, "receipts", "", "bbolt `FILE` that keeps the receipts across restarts (default: memory)")
	fs.StringVar(&cfg.escrowLedger, "escrow-ledger", "",
		"bbolt `FILE` that keeps the escrowed (auth-capture) payments across restarts, so that a payment held and not finished is captured or voided when the server starts again (default: memory)")
	fs.StringVar(&cfg.reputationFile, "reputation", "",
		"bbolt `FILE` that keeps what the engine learned of its sessions across restarts; a session whose worker changed since is forgotten as the server starts (default: memory)")
	fs.StringVar(&cfg.workers, "workers", "",
		"panel `FILE` (.json, .yaml) of chat-completions workers to run instead of the demo workers")
	fs.DurationVar(&cfg.slowSession, "slow-session", defaultSlowSession, "how long session 2 of the demo workers takes to answer (`D`)")
	fs.StringVar(&cfg.databaseURL, "database-url", "",
		"PostgreSQL `URL` that keeps idempotency keys, trial limits, used payments and receipts, shared by every server on it; "+envDatabaseURL+" sets it when the flag is not given")
	fs.StringVar(&cfg.schema, "database-schema", "", "`NAME` of the PostgreSQL schema of vouch's tables (default: the search_path's first)")
	fs.Float64Var(&perMinute, "trial-rate", defaultTrialPerMinute, "trial requests a caller regains per minute (`N` > 0)")
	fs.IntVar(&cfg.trialBurst, "trial-burst", defaultTrialBurst, "trial requests a caller may make at once (`N` >= 1)")
	fs.StringVar(&cfg.debugAddr, "debug-addr", "",
		"`HOST:PORT` serving /debug/vars (goroutines, memory, counters) and /metrics; off by default")
	fs.IntVar(&cfg.debugCallIDs, "debug-call-ids", defaultCallIDs,
		"`N` latest call ids that /debug/vars counts worker executions by, their text at most 64 bytes each on average; older ids are forgotten")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", "", "`HOST:PORT` serving /metrics alone (Prometheus text format); off by default")
	fs.Var((*prefixFlag)(&cfg.trustedProxies), "trusted-proxy",
		"reverse proxy `CIDR` (or address) whose Forwarded or X-Forwarded-For header names the client, for trial limits and idempotency scopes (repeatable; default: none)")
	fs.StringVar(&cfg.publicURL, "public-url", "",
		"base `URL` clients reach the server at, announced in the agent card, such as https://vouch.example behind a proxy that terminates TLS (default: the scheme and Host of each request)")
	fs.BoolVar(&cfg.mcpStdio, "mcp-stdio", false, "serve the MCP tools on stdin and stdout (for an MCP host to launch) instead of listening")
	fs.BoolVar(&cfg.facilitator, "facilitator", false, "serve the offline facilitator (it checks signatures and moves nothing) at "+facilitatorPath+"{verify,settle,supported}, for other x402 servers of a demonstration")
	fs.BoolVar(&cfg.mcpPaid, "mcp-paid", false, "the MCP tools that run workers take x402 payments in _meta[\"x402/payment\"], at the prices of the x402 routes")
	fs.Usage = func() {
		fmt.Fprint(out, `usage: go run ./examples/server [flags]

Serves the vouch router endpoints (v1, v2, v3 and factcheck v1 with its
fact-check alias; normal, trial and x402 variants; GET /api/v1/ping,
/api/v1/x402/ping, /api/v1/about, /api/v1/status) and the trust service (/api/v4/trust and its trial and x402
variants, /api/v4/receipt/{id}, /api/v4/verify_receipt) from one in-process
engine, on six deterministic demo workers or a panel of chat models.
See examples/server/README.md. Stop it with Ctrl-C.

environment (any local user can read a command line, only its user a
process's environment): `+envAPIKey+`, `+envIntegrations+` and `+envDatabaseURL+`
stand for -api-key, -integration and -database-url when those flags are
not given; a flag given beats its variable.

flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	given := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if v := getenv(envAPIKey); v != "" && !given["api-key"] {
		cfg.apiKey, cfg.apiKeyFromEnv = v, true
	}
	integrationsFrom := "-integration"
	if v := getenv(envIntegrations); v != "" && !given["integration"] {
		var err error
		if integrations, err = parseIntegrations(v); err != nil {
			return config{}, err
		}
		integrationsFrom = envIntegrations
	}
	cfg.databaseURLFrom = "-database-url"
	if v := getenv(envDatabaseURL); v != "" && !given["database-url"] {
		cfg.databaseURL, cfg.databaseURLFrom = v, envDatabaseURL
	}
	if cfg.addr == "" {
		// net.Listen would read it as every interface, on any port.
		return config{}, fmt.Errorf("-addr must not be empty: give HOST:PORT (the default is %s; :PORT listens on every interface)", defaultAddr)
	}
	if cfg.apiKey == "" {
		return config{}, errors.New("-api-key must not be empty")
	}
	if !sendableKey(cfg.apiKey) {
		from := "-api-key"
		if cfg.apiKeyFromEnv {
			from = envAPIKey
		}
		return config{}, fmt.Errorf("%s: %s", from, unsendableKey)
	}
	cfg.integrations = map[string]string{cfg.apiKey: defaultIntegration}
	names := []string{defaultIntegration}
	for _, nk := range integrations {
		name, key := nk[0], nk[1]
		if !sendableKey(key) {
			return config{}, fmt.Errorf("%s %s: %s", integrationsFrom, name, unsendableKey)
		}
		if _, dup := cfg.integrations[key]; dup {
			return config{}, fmt.Errorf("%s %s: its key is already in use", integrationsFrom, name)
		}
		if slices.Contains(names, name) {
			return config{}, fmt.Errorf("%s %s: the name is already in use", integrationsFrom, name)
		}
		if err := httpapi.CheckCredentialName(name); err != nil {
			// Every request with its key would be refused, 500.
			return config{}, fmt.Errorf("%s %s: %w", integrationsFrom, name, err)
		}
		cfg.integrations[key] = name
		names = append(names, name)
	}
	if _, err := evm.ParseAddress(cfg.payTo); err != nil {
		return config{}, fmt.Errorf("-pay-to: %w", err)
	}
	if !(perMinute > 0) || math.IsInf(perMinute, 0) {
		return config{}, fmt.Errorf("-trial-rate %v: want a positive number of requests a minute", perMinute)
	}
	cfg.trialRate = rate.Limit(perMinute / 60)
	if cfg.trialBurst < 1 {
		return config{}, fmt.Errorf("-trial-burst %d: want at least 1", cfg.trialBurst)
	}
	if cfg.slowSession < 0 {
		return config{}, fmt.Errorf("-slow-session %v: want a duration of at least 0", cfg.slowSession)
	}
	if given["slow-session"] && cfg.workers != "" {
		return config{}, errors.New("-slow-session slows a demo worker, and -workers runs none: give one")
	}
	if cfg.debugCallIDs < 1 {
		return config{}, fmt.Errorf("-debug-call-ids %d: want at least 1", cfg.debugCallIDs)
	}
	if cfg.publicURL != "" {
		u, err := url.Parse(cfg.publicURL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			return config{}, fmt.Errorf("-public-url %q: want an http or https URL with a host, and no user, query or fragment", cfg.publicURL)
		}
		cfg.publicURL = strings.TrimSuffix(u.String(), "/")
	}
	if cfg.schema != "" && cfg.databaseURL == "" {
		return config{}, errors.New("-database-schema needs -database-url")
	}
	if cfg.receipts != "" && cfg.databaseURL != "" {
		return config{}, fmt.Errorf("-receipts and %s both keep receipts: give one", cfg.databaseURLFrom)
	}
	if cfg.escrowLedger != "" && cfg.databaseURL != "" {
		return config{}, fmt.Errorf("-escrow-ledger and %s both keep the escrowed payments: give one", cfg.databaseURLFrom)
	}
	if cfg.reputationFile != "" && cfg.databaseURL != "" {
		return config{}, fmt.Errorf("-reputation and %s both keep the sessions' reputation: give one", cfg.databaseURLFrom)
	}
	return cfg, nil
}
