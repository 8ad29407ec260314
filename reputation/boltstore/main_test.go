package boltstore_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, failing them if any goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
