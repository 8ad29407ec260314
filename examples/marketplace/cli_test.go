package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestCLI_usage: the program takes no arguments; one it is given is a
// usage error that names it, exit 2, before anything runs; -h is not an
// error.
func TestCLI_usage(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		code  int
		first string // the first line on stderr
	}{
		{[]string{"extra"}, 2, `marketplace: unexpected argument "extra": it takes no arguments`},
		{[]string{"-x"}, 2, "flag provided but not defined: -x"},
		{[]string{"-h"}, 0, "usage: go run ./examples/marketplace"},
	} {
		var stdout, stderr bytes.Buffer
		code := cli(context.Background(), tt.args, &stdout, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if code != tt.code || first != tt.first || stdout.Len() != 0 {
			t.Errorf("marketplace %q: exit %d, stdout %q, stderr:\n%s\nwant exit %d, no output, and first %q", tt.args, code, &stdout, &stderr, tt.code, tt.first)
		}
	}
}
