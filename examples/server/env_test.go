package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// noEnv is a getenv of an empty environment, so that the tests do not
// depend on the one they run in.
func noEnv(string) string { return "" }

// env is a getenv of m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestParseFlags_environment: VOUCH_API_KEY, VOUCH_INTEGRATIONS and
// VOUCH_DATABASE_URL stand for -api-key, -integration and -database-url
// when those are not given; a flag given beats its variable.
func TestParseFlags_environment(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		envAPIKey:       "env-key",
		envIntegrations: "acme=k2, zed=k3=x\n\nbeta=k4\n",
		envDatabaseURL:  "postgres://u:pw@db/vouch",
	}
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		keys     map[string]string
		fromEnv  bool
		database string
	}{
		{"none", nil, nil, map[string]string{defaultAPIKey: defaultIntegration}, false, ""},
		{"environment", nil, vars,
			map[string]string{"env-key": defaultIntegration, "k2": "acme", "k3=x": "zed", "k4": "beta"}, true, vars[envDatabaseURL]},
		{"flags beat it", []string{"-api-key", "flag-key", "-integration", "only=k9", "-database-url", "postgres://flag"}, vars,
			map[string]string{"flag-key": defaultIntegration, "k9": "only"}, false, "postgres://flag"},
		{"empty variables are unset", nil, map[string]string{envAPIKey: "", envIntegrations: "", envDatabaseURL: ""},
			map[string]string{defaultAPIKey: defaultIntegration}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseFlags(tt.args, env(tt.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.keys, cfg.integrations); diff != "" || cfg.apiKeyFromEnv != tt.fromEnv || cfg.databaseURL != tt.database {
				t.Errorf("keys (-want +got):\n%s; key from the environment %v, database %q; want %v, %q", diff, cfg.apiKeyFromEnv, cfg.databaseURL, tt.fromEnv, tt.database)
			}
		})
	}
	var usage bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, noEnv, &usage); err == nil {
		t.Error("-h: no error, want flag.ErrHelp")
	}
	for _, name := range []string{envAPIKey, envIntegrations, envDatabaseURL} {
		if !strings.Contains(usage.String(), name) {
			t.Errorf("usage does not name %s:\n%s", name, usage.String())
		}
	}
	for _, bad := range []map[string]string{
		{envIntegrations: "acme=k2,secret-without-name"},
		{envIntegrations: "acme=k2,beta=k2"},
		{envIntegrations: "demo=k2"},
		{envAPIKey: "k", envIntegrations: "acme=k"},
		{envDatabaseURL: "postgres://x", "unused": ""},
	} {
		args := []string{}
		if _, ok := bad[envDatabaseURL]; ok {
			args = []string{"-receipts", "r.db"}
		}
		_, err := parseFlags(args, env(bad), io.Discard)
		if err == nil {
			t.Errorf("parseFlags with %q succeeded, want an error", bad)
		} else if strings.Contains(err.Error(), "secret-without-name") {
			t.Errorf("the error %q quotes an entry that may be a key", err)
		}
	}
}

// TestRun_bannerKeyFromEnvironment: the banner prints the API key of
// -api-key (the demo key by default), but not one from VOUCH_API_KEY: it
// says that key was set, and its curls read it from the variable.
func TestRun_bannerKeyFromEnvironment(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve nothing: print the banner and stop
	var out bytes.Buffer
	vars := map[string]string{envAPIKey: "s3cret-key", envIntegrations: "acme=s3cret-2"}
	if err := run(ctx, []string{"-addr", "127.0.0.1:0"}, env(maps.Clone(vars)), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := readBanner(&out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.text, "s3cret") {
		t.Errorf("the banner prints a key from the environment:\n%s", b.text)
	}
	for _, want := range []string{
		"API key: set by " + envAPIKey, "other integrations: acme",
		`/api/v4/trust -H "Authorization: Bearer $` + envAPIKey + `"`,
	} {
		if !strings.Contains(b.text, want) {
			t.Errorf("banner lacks %q:\n%s", want, b.text)
		}
	}
}

// TestParseFlags_unsendableKey: an API key that no client can send, one
// with white space at an end (a line end read from a file with it) or a
// control character, is refused naming where it came from, without
// quoting it: the server would otherwise answer every call 401.
func TestParseFlags_unsendableKey(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-api-key", " s3cret"}, nil, "-api-key"},
		{nil, map[string]string{envAPIKey: "s3cret\r"}, envAPIKey},
		{nil, map[string]string{envAPIKey: "s3cret\n"}, envAPIKey},
		{[]string{"-integration", "acme=s3cret\t"}, nil, "-integration acme"},
		{[]string{"-integration", "acme=s3c\x00ret"}, nil, "-integration acme"},
		{nil, map[string]string{envIntegrations: "acme=s3c\x7fret"}, envIntegrations + " acme"},
	} {
		_, err := parseFlags(tt.args, env(tt.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3c") {
			t.Errorf("parseFlags(%q, %q) = %v, want an error naming %s and not quoting the key", tt.args, tt.env, err, tt.want)
		}
	}
}

// TestParseFlags_reservedIntegrationName: an integration named as the
// server names a caller without a credential (the host's own local, an
// ip:, payer: or trial: caller), whose requests would all be refused, is
// refused at start, naming it; another name starts.
func TestParseFlags_reservedIntegrationName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"local", "ip:10.0.0.1", "payer:0xabc", "trial:ip:10.0.0.1"} {
		_, err := parseFlags([]string{"-integration", name + "=k2"}, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "-integration "+name) {
			t.Errorf("-integration %s=k2: %v, want an error naming it", name, err)
		}
	}
	if _, err := parseFlags([]string{"-integration", "acme=k2"}, noEnv, io.Discard); err != nil {
		t.Errorf("-integration acme=k2: %v", err)
	}
}

// A flag of the demo workers is refused beside a panel of workers, which
// it would not change.
func TestParseFlags_slowSessionWithWorkers(t *testing.T) {
	_, err := parseFlags([]string{"-workers", "panel.yaml", "-slow-session", "2s"}, noEnv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-slow-session") || !strings.Contains(err.Error(), "-workers") {
		t.Errorf("parseFlags = %v, want an error naming -slow-session and -workers", err)
	}
	if _, err := parseFlags([]string{"-workers", "panel.yaml"}, noEnv, io.Discard); err != nil {
		t.Errorf("parseFlags(-workers) = %v, want no error", err)
	}
}

// TestRun_databaseURLNamedAsGiven: an error about the database URL names
// where it came from, -database-url or VOUCH_DATABASE_URL, as the API
// key's do: a server started with the variable alone would otherwise be
// told about a flag it was not given.
func TestRun_databaseURLNamedAsGiven(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := ln.Addr().String() // an address nothing listens on: a wrong port
	ln.Close()
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"variable beside -receipts", []string{"-receipts", "r.db"}, map[string]string{envDatabaseURL: "postgres://u:s3cret@db/x"},
			"-receipts and " + envDatabaseURL + " both keep receipts"},
		{"flag beside -reputation", []string{"-reputation", "r.db", "-database-url", "postgres://u:s3cret@db/x"}, nil,
			"-reputation and -database-url both keep"},
		{"variable that does not parse", []string{"-addr", "127.0.0.1:0"}, map[string]string{envDatabaseURL: "s3cret is not a URL"},
			envDatabaseURL + ": pgstore: the database URL does not parse"},
		{"variable naming a port nothing listens on", []string{"-addr", "127.0.0.1:0"}, map[string]string{envDatabaseURL: "postgres://u:s3cret@" + nobody + "/x?sslmode=disable"},
			envDatabaseURL + ": pgstore: the database at " + nobody + " cannot be reached: dial tcp " + nobody + ": connect: connection refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, env(tt.env), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("run = %v, want an error holding %q and not quoting the URL", err, tt.want)
			}
		})
	}
}

// TestParseFlags_emptyAddr: an empty -addr (a script's unset variable,
// -addr "$ADDR") is refused, naming the flag, rather than read as
// net.Listen reads it, every interface on a port of the system's choice:
// the demo key would then open the server to the whole network.
func TestParseFlags_emptyAddr(t *testing.T) {
	t.Parallel()
	if _, err := parseFlags([]string{"-addr", ""}, noEnv, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "-addr") {
		t.Errorf(`-addr "": %v, want an error naming -addr`, err)
	}
	for _, addr := range []string{"127.0.0.1:0", ":8080", "[::1]:0"} {
		if _, err := parseFlags([]string{"-addr", addr}, noEnv, io.Discard); err != nil {
			t.Errorf("-addr %q: %v, want no error", addr, err)
		}
	}
}
