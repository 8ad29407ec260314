package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun_usageMessages checks that a bad argument is reported on standard
// error with exit 2, in words that name the flag or file at fault.
func TestRun_usageMessages(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(text, []byte("not JSON"), 0o600); err != nil {
		t.Fatal(err)
	}
	const rcpt = "../../receipt/testdata/golden/signed.json"
	const key = "ed25519:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
	missing := filepath.Join(dir, "missing.pub")
	tests := []struct {
		name string
		args []string
		want []string // in stderr
		not  []string
	}{
		{"input not JSON", []string{"-key", key, "-input", text, rcpt}, []string{"plain.txt is not JSON", "-input-text"}, []string{"-text flag"}},
		{"output not JSON", []string{"-key", key, "-output", text, rcpt}, []string{"plain.txt is not JSON", "-output-text"}, []string{"-text flag"}},
		{"missing key file", []string{"-key", missing, rcpt}, []string{"missing.pub", "no such file"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, &stderr)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(stderr.String(), w) {
					t.Errorf("stderr holds %q:\n%s", w, &stderr)
				}
			}
		})
	}
}
