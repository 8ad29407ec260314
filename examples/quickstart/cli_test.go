package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCLI_usage: an argument the program does not take is a usage error
// that names it, exit 2, before anything runs; -h is not an error.
func TestCLI_usage(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		code  int
		first string // the first line on stderr
	}{
		{[]string{"extra"}, 2, `quickstart: unexpected argument "extra": it takes no arguments, only the flag -json`},
		{[]string{"-json", "out.json"}, 2, `quickstart: unexpected argument "out.json": it takes no arguments, only the flag -json`},
		{[]string{"-x"}, 2, "flag provided but not defined: -x"},
		{[]string{"-h"}, 0, "usage: go run ./examples/quickstart [-json]"},
	} {
		var stdout, stderr bytes.Buffer
		code := cli(context.Background(), tt.args, &stdout, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if code != tt.code || first != tt.first || stdout.Len() != 0 {
			t.Errorf("quickstart %q: exit %d, stdout %q, stderr:\n%s\nwant exit %d, no output, and first %q", tt.args, code, &stdout, &stderr, tt.code, tt.first)
		}
	}
}
