package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
)

// TestCLI_usage: a positional argument, a flag of the other mode (the
// workload's -calls, -seed, -judge-errors, -md with -pairs; -embed-url
// and -embed-model without it) and a bad value are usage errors: one
// line naming the flag or argument, exit 2, before anything runs or any
// file is written.
func TestCLI_usage(t *testing.T) {
	const pairs = "../../router/embedkey/testdata/pairs.json"
	md := filepath.Join(t.TempDir(), "table.md")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"extra"}, `freetext: unexpected argument "extra": it takes flags only`},
		{[]string{"-calls", "10", "table.md"}, `freetext: unexpected argument "table.md": it takes flags only`},
		{[]string{"-embed-url", "http://127.0.0.1:1/v1"}, "freetext: -embed-url applies only with -pairs"},
		{[]string{"-md", md, "-embed-model", "m"}, "freetext: -embed-model applies only with -pairs"},
		{[]string{"-pairs", pairs, "-embed-url", "http://127.0.0.1:1/v1", "-md", md}, "freetext: -md applies to the seeded workload, not to -pairs"},
		{[]string{"-calls", "5", "-pairs", pairs, "-embed-url", "http://127.0.0.1:1/v1"}, "freetext: -calls applies to the seeded workload, not to -pairs"},
		{[]string{"-pairs", pairs, "-embed-url", "http://127.0.0.1:1/v1", "-seed", "2"}, "freetext: -seed applies to the seeded workload, not to -pairs"},
		{[]string{"-pairs", pairs, "-embed-url", "http://127.0.0.1:1/v1", "-judge-errors", "0"}, "freetext: -judge-errors applies to the seeded workload, not to -pairs"},
		{[]string{"-pairs", pairs}, "freetext: -pairs needs -embed-url"},
		{[]string{"-calls", "0", "-md", md}, "freetext: -calls 0: want at least 1"},
		{[]string{"-thresholds", "0.9,1.5"}, `freetext: -thresholds: "1.5" is not a number in [1e-09, 1]`},
		{[]string{"-judge-errors", ",0.1"}, `freetext: -judge-errors: "" is not a number in [0, 1]`},
	} {
		var stdout, stderr bytes.Buffer
		code := cli(context.Background(), tt.args, &stdout, &stderr)
		if code != 2 || strings.TrimSuffix(stderr.String(), "\n") != tt.want || stdout.Len() != 0 {
			t.Errorf("freetext %q: exit %d, stdout %q, stderr %q; want exit 2 and %q alone", tt.args, code, &stdout, &stderr, tt.want)
		}
	}
	if _, err := os.Stat(md); err == nil {
		t.Errorf("a usage error wrote %s", md)
	}
	var stderr bytes.Buffer
	if code := cli(context.Background(), []string{"-h"}, &bytes.Buffer{}, &stderr); code != 0 || !strings.HasPrefix(stderr.String(), "usage: ") {
		t.Errorf("-h: exit %d, stderr:\n%s\nwant exit 0 and the usage text", code, &stderr)
	}
}

// TestCLI_modes: each mode runs with its own flags and -thresholds: the
// workload writes its table to -md, and -pairs measures the model behind
// -embed-url over loopback (a stand-in that finds every pair identical,
// so the verdict is exit 1 after the table).
func TestCLI_modes(t *testing.T) {
	md := filepath.Join(t.TempDir(), "table.md")
	var stdout, stderr bytes.Buffer
	if code := cli(t.Context(), []string{"-calls", "5", "-seed", "2", "-judge-errors", "0", "-thresholds", "0.97", "-md", md}, &stdout, &stderr); code != 0 {
		t.Fatalf("workload: exit %d, stderr:\n%s", code, &stderr)
	}
	if table, err := os.ReadFile(md); err != nil || !strings.HasPrefix(string(table), "5 questions, seed 2;") || stdout.Len() != 0 {
		t.Errorf("workload: table %q (%v), stdout %q; want the table in -md only", table, err, &stdout)
	}

	srv := embedkeytest.NewServer(func(string) []float64 { return []float64{1, 0} })
	defer srv.Close()
	stdout.Reset()
	stderr.Reset()
	code := cli(t.Context(), []string{"-pairs", "../../router/embedkey/testdata/pairs.json", "-embed-url", srv.URL + "/v1", "-embed-model", "same", "-thresholds", "0.9"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "| similarity alone | 0.9 | 50 of 50 | 49 of 49 |") ||
		!strings.Contains(stderr.String(), "does not tell paraphrases from changed facts") {
		t.Errorf("pairs: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 after the table, the model found at fault", code, &stdout, &stderr)
	}
}
