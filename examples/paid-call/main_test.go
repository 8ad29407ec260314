package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// newPaidServer serves the router with its x402 validate v2 route priced
// at $0.001, paid through the offline facilitator, as examples/server
// does; the facilitator records what settled.
func newPaidServer(t *testing.T) (*httptest.Server, *evm.Facilitator) {
	t.Helper()
	v := routertest.Verdict(router.VerdictValid)
	e, err := router.NewEngine(routertest.Sessions(1, 1, v))
	if err != nil {
		t.Fatal(err)
	}
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	fac := &evm.Facilitator{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac,
		Routes: map[string]x402.Price{"POST /api/v2/x402/validate": {Accepts: []x402.PaymentRequirements{offer}}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := router.NewHandler(e, router.WithX402(mw))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, fac
}

func TestRun(t *testing.T) {
	srv, fac := newPaidServer(t)
	url := srv.URL + "/api/v2/x402/validate"
	otherKey := strings.Repeat("52", 32)
	other, _ := evm.NewPayer(otherKey)
	demo, _ := evm.NewPayer(demoKey)

	tests := []struct {
		name     string
		args     []string
		env      string // VOUCH_X402_KEY
		code     int
		settled  int // settlements the call adds
		want     []string
		wantNone []string
	}{
		{"pays with the demo key on loopback", []string{"-url", url}, "", 0, 1,
			[]string{"payer:  " + demo.Address().String(), "status: 200 OK", "signed for 1000 atomic units",
				`"verdict": "VALID"`, `"success": true`, `"amount": "1000"`, `"payer": "` + demo.Address().String()}, nil},
		{"key from the environment", []string{"-url", url}, otherKey, 0, 1,
			[]string{"payer:  " + other.Address().String(), `"success": true`}, nil},
		{"-key wins over the environment", []string{"-url", url, "-key", "0x" + otherKey}, demoKey, 0, 1,
			[]string{"payer:  " + other.Address().String()}, nil},
		{"above -max", []string{"-url", url, "-max", "$0.0005"}, "", 1, 0,
			nil, []string{"status:", "no acceptable offer"}},
		{"network not allowed", []string{"-url", url, "-network", "base"}, "", 1, 0,
			nil, []string{"status:", "no acceptable offer"}},
		{"lists with spaces", []string{"-url", url, "-network", "base, base-sepolia", "-schemes", "upto, exact"}, "", 0, 1,
			[]string{"status: 200 OK", `"success": true`}, nil},
		{"handler refuses: no settlement", []string{"-url", url, "-data", `{"session_id":1}`}, "", 1, 0,
			[]string{"status: 400 Bad Request", "claim.type", "settlement: none"}, nil},
		{"free route", []string{"-url", srv.URL + "/api/v1/ping", "-method", "GET", "-data", ""}, "", 0, 0,
			[]string{"status: 200 OK", "payment: none asked", `"message": "pong"`, "settlement: none"}, nil},
		{"no such route", []string{"-url", srv.URL + "/api/v1/nowhere", "-method", "GET", "-data", ""}, "", 1, 0,
			[]string{"status: 404 Not Found", "payment: none asked", "settlement: none"}, nil},
		{"remote URL needs a key", []string{"-url", "https://example.com/paid"}, "", 2, 0, nil, []string{"payer:"}},
		{"bad key", []string{"-url", url, "-key", "zz"}, "", 2, 0, nil, nil},
		{"bad max", []string{"-url", url, "-max", "-1"}, "", 2, 0, nil, nil},
		{"bad data", []string{"-url", url, "-data", "{"}, "", 2, 0, nil, nil},
		{"bad url", []string{"-url", "/relative"}, "", 2, 0, nil, nil},
		{"help", []string{"-h"}, "", 0, 0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(fac.Settlements())
			var out, errOut bytes.Buffer
			getenv := func(k string) string {
				if k == envKey {
					return tt.env
				}
				return ""
			}
			code := run(context.Background(), tt.args, &out, &errOut, getenv)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, &out, &errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, &out)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, &out)
				}
			}

			if got := len(fac.Settlements()) - before; got != tt.settled {
				t.Errorf("settlements = %d, want %d", got, tt.settled)
			}
		})
	}
}

func TestRun_usage(t *testing.T) {
	var errOut bytes.Buffer
	run(context.Background(), []string{"-h"}, &bytes.Buffer{}, &errOut, func(string) string { return "" })
	for _, f := range []string{"-url URL", "-key KEY", "VOUCH_X402_KEY", "-max", "-data JSON", "-method METHOD", "-network", "-timeout"} {
		if !strings.Contains(errOut.String(), f) {
			t.Errorf("usage lacks %q:\n%s", f, &errOut)
		}
	}
}

// TestRun_badSettings: a bad key from VOUCH_X402_KEY is reported as that
// variable's, not -key's, and a -timeout that is not positive is refused
// before any call, naming the flag.
func TestRun_badSettings(t *testing.T) {
	const url = "http://127.0.0.1:1/api/v2/x402/validate"
	for _, tt := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"-url", url}, "zz", "paid-call: " + envKey + ": "},
		{[]string{"-url", url, "-timeout", "0s"}, "", "paid-call: -timeout 0s: "},
		{[]string{"-url", url, "-timeout", "-1s"}, "", "paid-call: -timeout -1s: "},
		{[]string{"-url", url, "-schemes", " , "}, "", `paid-call: -schemes " , " names no scheme`},
		{[]string{"-url", url, "-network", ","}, "", `paid-call: -network "," names no network`},
		{[]string{"-url", url, "-schemes", "foo"}, "", `paid-call: -schemes: unknown scheme "foo" (want exact, upto, auth-capture)`},
		{[]string{"-url", url, "-schemes", "exact,Upto"}, "", `paid-call: -schemes: unknown scheme "Upto"`},
		{[]string{"-url", url, "-network", "foo"}, "", `paid-call: -network: unknown network "foo"`},
		{[]string{"-url", url, "-network", "base-sepolia,base-sepolai"}, "", `paid-call: -network: unknown network "base-sepolai"`},
		{[]string{"-url", url, "-network", "any,base"}, "", `paid-call: -network: unknown network "any"`},
	} {
		var errOut bytes.Buffer
		code := run(context.Background(), tt.args, &bytes.Buffer{}, &errOut, func(k string) string {
			if k == envKey {
				return tt.env
			}
			return ""
		})
		if code != 2 || !strings.HasPrefix(errOut.String(), tt.want) {
			t.Errorf("run %q with %s=%q: exit %d, stderr %q; want exit 2 and %q", tt.args, envKey, tt.env, code, &errOut, tt.want)
		}
	}
}

// TestRun_errorsOnStderr: a call that fails says why on stderr, in one
// line that starts with the program's name, and stdout keeps only the
// payer line.
func TestRun_errorsOnStderr(t *testing.T) {
	srv, _ := newPaidServer(t)
	url := srv.URL + "/api/v2/x402/validate"
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"-url", url, "-max", "$0.0005"}, []string{"paid-call: ", "no acceptable offer", "above the limit of 500"}},
		{[]string{"-url", url, "-network", "base"}, []string{"paid-call: ", "no acceptable offer", `network "eip155:84532" is not allowed`}},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tt.args, &out, &errOut, func(string) string { return "" })
		if code != 1 {
			t.Errorf("run %q: exit %d, want 1", tt.args, code)
		}
		if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "payer:  ") {
			t.Errorf("run %q: stdout = %q, want the payer line only", tt.args, &out)
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut.String(), w) {
				t.Errorf("run %q: stderr lacks %q:\n%s", tt.args, w, &errOut)
			}
		}
	}
}
