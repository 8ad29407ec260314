package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRun_allowExpiredNamesTheFlag checks that an expired receipt accepted
// with -allow-expired is reported in terms of the flag, not of the Go
// option behind it.
func TestRun_allowExpiredNamesTheFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-key", "ed25519:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "-allow-expired",
		"../../receipt/testdata/golden/signed.json"}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 || !strings.Contains(out, "expiry      skipped: ") || !strings.Contains(out, "accepted by -allow-expired") || strings.Contains(out, "WithExpiredUnsafe") {
		t.Errorf("exit %d, output:\n%s%s\nwant 0 and the expiry accepted by -allow-expired", code, out, stderr.String())
	}
}
