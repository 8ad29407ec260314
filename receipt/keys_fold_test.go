package receipt_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

// TestParseKeyFile_caseFoldedMember gives one member twice in names that
// differ only in case. encoding/json matches names regardless of case
// and keeps the last, so a key file merged by hand could lose its keys,
// or move a retired key's window, without a word: ParseKeyFile refuses
// it, as it refuses a name written twice alike.
func TestParseKeyFile_caseFoldedMember(t *testing.T) {
	f, err := receipt.NewKeyFile(t0(), bytes.NewReader(bytes.Repeat([]byte{1}, 64)))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Rotate(t0().Add(time.Hour), bytes.NewReader(bytes.Repeat([]byte{2}, 64))); err != nil {
		t.Fatal(err)
	}
	good := string(f.Marshal())
	for name, tc := range map[string]struct{ text, member string }{
		// The retired key's window would end in 2030, not an hour after t0.
		"not_after": {strings.Replace(good, `"not_after": "2026-05-01T13:00:00Z"`,
			`"not_after": "2026-05-01T13:00:00Z", "Not_After": "2030-01-01T00:00:00Z"`, 1), "Not_After"},
		// The file would hold the last key alone.
		"keys": {strings.Replace(good, `{`, `{"KEYS": [],`, 1), "KEYS"},
	} {
		got, err := receipt.ParseKeyFile([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.member) {
			t.Errorf("%s: ParseKeyFile = %v, %v; want an error naming %q", name, got, err, tc.member)
		}
	}
}
