//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A key file that group or others may read is used, and the banner says
// so with the command that closes it: anyone who reads the file can sign
// receipts as the server.
func TestLoadSigningKey_readableByOthers(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	for mode, warned := range map[os.FileMode]bool{0o600: false, 0o400: false, 0o640: true, 0o644: true} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		k, err := loadSigningKey(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(k.origin, "chmod 600 "+path); got != warned {
			t.Errorf("mode %o: origin %q; want a warning %v", mode, k.origin, warned)
		}
	}
}
