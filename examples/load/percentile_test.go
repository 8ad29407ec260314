package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRow_percentiles prints the row of 100 latencies of 1ms to 100ms:
// by nearest rank, p50 is the 50th smallest (50ms), p90 the 90th and p99
// the 99th, one below the max; and of 10 latencies p90 is the 9th, not
// the max.
func TestRow_percentiles(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []string
	}{
		{100, []string{"kind", "100", "0", "50ms", "90ms", "99ms", "100ms"}},
		{10, []string{"kind", "10", "0", "5ms", "9ms", "10ms", "10ms"}},
	} {
		lat := make([]time.Duration, tc.n)
		for i := range lat {
			lat[i] = time.Duration(tc.n-i) * time.Millisecond // unsorted: row sorts
		}
		var b strings.Builder
		row(&b, "kind", lat, 0)
		if diff := cmp.Diff(tc.want, strings.Split(strings.TrimSuffix(b.String(), "\t\n"), "\t")); diff != "" {
			t.Errorf("%d latencies (-want +got):\n%s", tc.n, diff)
		}
	}
}
