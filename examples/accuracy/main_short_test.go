package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain shrinks the shared runs under -short: one episode of the
// simulated workloads, the first calls of each real-data workload and
// world. Every test still runs, on fewer calls; the golden tests compare
// the calls made (see golden). The full run, without -short, measures
// the sizes the variables declare.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		smallCfg.calls = smallCfg.episode
		realCfg.realCalls, realCfg.realWarm = 60, 30
		delegationCfg.realCalls, delegationCfg.delegationWarm = 60, 30
		worldsCfg.realCalls = 24
	}
	goleak.VerifyTestMain(m)
}

// golden returns the lines of the golden file at path that got's calls
// should match: every line, or under -short, where the runs are cut
// short, the lines of the calls got holds (the first three fields of a
// line name its call). A cut run answers its calls as the full run does:
// each episode's calls come one after another.
func golden(t *testing.T, path, got string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(string(b), "\n")
	if !testing.Short() {
		return want
	}
	made := map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		made[key(l)] = true
	}
	var kept []string
	for _, l := range want {
		if made[key(l)] {
			kept = append(kept, l)
		}
	}
	return kept
}

// key returns a golden line's first three fields.
func key(line string) string {
	f := strings.Fields(line)
	return strings.Join(f[:min(3, len(f))], " ")
}
