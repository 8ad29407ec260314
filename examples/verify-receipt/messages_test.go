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

// TestRun_errorAnswerInFile checks that a file holding the server's error
// answer, as `curl -s ... > receipt.json` writes it when the request failed
// (a wrong key, an empty or unknown receipt id), is named as such, with the
// server's status and detail, not checked as a receipt or a proof with
// every member missing.
func TestRun_errorAnswerInFile(t *testing.T) {
	notFound := `{"type":"urn:vouch:problem:not_found","title":"Not Found","status":404,` +
		`"detail":"no receipt with this id is available to the caller","instance":"/api/v4/receipt/rcpt_x",` +
		`"code":"not_found","request_id":"req_1"}` + "\n"
	unauthorized := `{"type":"urn:vouch:problem:unauthorized","title":"Unauthorized","status":401,` +
		`"detail":"the credential is not valid","code":"unauthorized"}`
	dir := t.TempDir()
	answers := map[string]string{"receipt.json": notFound, "proof.json": notFound, "log.json": unauthorized, "consistency.json": unauthorized}
	for name, body := range answers {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	badReceipt, badProof := filepath.Join(dir, "receipt.json"), filepath.Join(dir, "proof.json")
	badLog, badConsistency := filepath.Join(dir, "log.json"), filepath.Join(dir, "consistency.json")
	const rcpt = "../../receipt/testdata/golden/signed.json"
	const key = "ed25519:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
	const srv = "testdata/server/"
	tests := []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"receipt", []string{"-key", key, badReceipt, "-proof", badProof},
			[]string{"receipt.json holds an error answer of the server, not a receipt", "404 not_found: no receipt with this id is available to the caller"}},
		{"proof", []string{"-key", key, "-allow-expired", rcpt, "-proof", badProof},
			[]string{"proof.json holds an error answer of the server, not a proof", "404 not_found"}},
		{"old checkpoint", []string{"-keys", srv + "trusted.json", "-old", badLog, "-new", srv + "log3.json", "-consistency", srv + "consistency.json"},
			[]string{"log.json holds an error answer of the server, not a checkpoint", "401 unauthorized: the credential is not valid"}},
		{"consistency", []string{"-keys", srv + "trusted.json", "-old", srv + "log1.json", "-new", srv + "log3.json", "-consistency", badConsistency},
			[]string{"consistency.json holds an error answer of the server, not a consistency proof", "401 unauthorized"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2; stdout:\n%s", code, &stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, &stderr)
				}
			}
		})
	}
}
