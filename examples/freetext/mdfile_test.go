package main

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

// TestMain_tableWriteFails runs the program with -md naming a file that
// takes no bytes (/dev/full: every write fails, as on a full disk). The
// table was not written, so the program must not exit 0.
func TestMain_tableWriteFails(t *testing.T) {
	if os.Getenv("FREETEXT_TEST_MAIN") == "1" {
		os.Args = []string{"freetext", "-calls", "1", "-md", "/dev/full"}
		main()
		return
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMain_tableWriteFails$")
	cmd.Env = append(os.Environ(), "FREETEXT_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Errorf("freetext -md /dev/full: err = %v, want a non-zero exit; output:\n%s", err, out)
	}
}
