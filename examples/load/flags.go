package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// config is what the flags set.
type config struct {
	url         string        // the server's base URL
	debugURL    string        // its /debug/vars, or "" for no checks
	apiKey      string        // sent as Authorization: Bearer
	calls       int           // how many calls in all
	round       int           // how many calls between two reads of the server's counts
	concurrency int           // how many clients at once
	mix         []weighted    // the kinds of call and their shares
	duration    time.Duration // the bound of the whole load
	seed        uint64        // fixes the sequence of kinds and claims
	settle      time.Duration // how long the server may take to settle after the load
	quiet       time.Duration // how long the heap is watched for growth once the server has settled
	every       time.Duration // how often a progress line is printed
}

// weighted is one kind of call and its share of the mix.
type weighted struct {
	kind   kind
	weight int
}

const defaultMix = "validate_v2=3,validate_v3=3,delegate_v3=2,trust=2"

func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{quiet: heapQuiet}
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.url, "url", "http://127.0.0.1:8080", "base `URL` of the server")
	fs.StringVar(&cfg.debugURL, "debug-url", "http://127.0.0.1:8081/debug/vars",
		"`URL` of the server's /debug/vars (examples/server -debug-addr); empty skips the server-side checks")
	fs.StringVar(&cfg.apiKey, "api-key", "demo-key", "API `KEY` of the normal routes")
	fs.IntVar(&cfg.calls, "calls", 20000, "`N` calls in all")
	fs.IntVar(&cfg.round, "round", 20000, "`N` calls a round: after each, the server's counts are compared with the answers and its live heap read")
	fs.IntVar(&cfg.concurrency, "concurrency", 256, "`N` clients calling at once")
	mix := fs.String("mix", defaultMix, "kinds of call and their weights: `KIND=W,...` with kinds "+strings.Join(kindNames(), ", "))
	fs.DurationVar(&cfg.duration, "duration", 10*time.Minute, "bound of the whole load; calls not sent by then are reported and not made")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the sequence of kinds and claims")
	fs.DurationVar(&cfg.settle, "settle", 15*time.Second, "how long the server may take to release goroutines and memory after the load; 0 reads it once, without waiting")
	fs.DurationVar(&cfg.every, "progress", time.Second, "interval between progress lines")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case cfg.calls < 1:
		return config{}, fmt.Errorf("-calls %d: want at least 1", cfg.calls)
	case cfg.round < 1:
		return config{}, fmt.Errorf("-round %d: want at least 1", cfg.round)
	case cfg.concurrency < 1:
		return config{}, fmt.Errorf("-concurrency %d: want at least 1", cfg.concurrency)
	case cfg.duration <= 0:
		return config{}, fmt.Errorf("-duration %v: want a positive duration", cfg.duration)
	case cfg.settle < 0:
		return config{}, fmt.Errorf("-settle %v: want a duration of 0 or more", cfg.settle)
	case cfg.every <= 0:
		return config{}, fmt.Errorf("-progress %v: want a positive duration", cfg.every)
	case cfg.url == "":
		return config{}, fmt.Errorf("-url is required")
	}
	for _, f := range []struct{ name, value string }{{"-url", cfg.url}, {"-debug-url", cfg.debugURL}} {
		if p, err := url.Parse(f.value); f.value != "" && (err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "") {
			return config{}, fmt.Errorf("%s %q: want an absolute http or https URL", f.name, f.value)
		}
	}
	var err error
	if cfg.mix, err = parseMix(*mix); err != nil {
		return config{}, fmt.Errorf("-mix: %w", err)
	}
	return cfg, nil
}

// parseMix reads "kind=weight,...".
func parseMix(s string) ([]weighted, error) {
	var mix []weighted
	seen := map[kind]bool{}
	for part := range strings.SplitSeq(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		k := kind(name)
		if !ok || !slices.Contains(kindNames(), name) {
			return nil, fmt.Errorf("%q: want KIND=WEIGHT with a kind of %s", part, strings.Join(kindNames(), ", "))
		}
		n, err := strconv.Atoi(w)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: the weight must be a whole number >= 0", part)
		}
		if seen[k] {
			return nil, fmt.Errorf("%q: kind given twice", part)
		}
		seen[k] = true
		if n > 0 {
			mix = append(mix, weighted{k, n})
		}
	}
	if len(mix) == 0 {
		return nil, fmt.Errorf("%q: no kind has a positive weight", s)
	}
	return mix, nil
}
