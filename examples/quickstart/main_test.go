package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, false); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`delegation: summarize the article\n\s+status VALID`),
		regexp.MustCompile(`validation: .*\n\s+status VALID`),
		regexp.MustCompile(`arbitration: .*\n\s+status SELLER_INVALID`),
		// Adaptive never spends more than oracle, and its confidence is
		// the Posterior of the votes printed beside it.
		regexp.MustCompile(`oracle\s+RETRY\s+confidence 0.89\s+runs 5\s+votes 4–1`),
		regexp.MustCompile(`adaptive\s+VALID\s+confidence 0.88\s+runs 2\s+votes 2–0`),
		regexp.MustCompile(`adaptive\s+INVALID\s+confidence 0.81\s+runs 4\s+votes 3–1`),
		regexp.MustCompile(`identical to the response: true`),
		regexp.MustCompile(`check signature\s+passed`),
		regexp.MustCompile(`check output_hash\s+passed`),
		// With reputation on, the sloppy session 3 has learned the lowest
		// reliability, and adaptive settles the claim adaptive above needed
		// 4 runs for on 2 runs of reliable sessions; with no outcome
		// reported, it states no more than equal votes would (7/8).
		regexp.MustCompile(`session 3  0\.[0-7]\d\n`),
		regexp.MustCompile(`adaptive\s+INVALID\s+confidence 0\.875\s+runs 2\n`),
		// The map is adaptive's for INVALID; the weighted credence of the
		// two reliable votes is above what the call states.
		regexp.MustCompile(`calibration: uncalibrated on 0 outcomes of map adaptive/INVALID \(weighted (0\.9\d\d|1\.000), conservative 0\.875\)`),
		// Once the host reports the outcomes of audited calls, all right,
		// the same claim states more than equal votes would, read on the
		// map of adaptive's INVALID verdicts, and the response's points
		// give its number back.
		regexp.MustCompile(`audited 12 adaptive calls and reported each outcome: 12 right, 0 wrong`),
		regexp.MustCompile(`adaptive\s+INVALID\s+confidence 0\.9[0-9]\d\s+runs \d\n\s+calibration: outcomes on 6 outcomes of map adaptive/INVALID`),
	} {
		if !want.MatchString(got) {
			t.Errorf("output lacks %s:\n%s", want, got)
		}
	}
	// The calibrated number, recomputed from the response's points, is
	// the one the call states.
	m := regexp.MustCompile(`confidence (0\.\d+)  runs \d\n\s+calibration: outcomes(?s:.*)Interpolate\(points, [01]\.\d+\) = (0\.\d+)`).FindStringSubmatch(got)
	if m == nil || m[1] != m[2] {
		t.Errorf("the calibrated confidence and its recomputation differ or are missing (%q):\n%s", m, got)
	}
}

func TestRun_json(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, true); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(out.String()))
	n := 0
	for {
		var v map[string]any
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("output is not a stream of JSON objects: %v", err)
		}
		n++
	}
	// 3 modes, 2 claims × 3 tiers, the receipt's response and its
	// verification, the adaptive call weighed by reputation, and again
	// once outcomes were reported.
	if n != 3+6+2+1+1 {
		t.Errorf("%d JSON objects, want 13", n)
	}
}
