package x402_test

import (
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

func TestMemoryReplay_suite(t *testing.T) {
	x402test.TestReplayStore(t, func(*testing.T) (a, b x402.ReplayStore) {
		s := &x402.MemoryReplay{}
		return s, s
	})
}
