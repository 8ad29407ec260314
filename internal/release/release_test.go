package release

import (
	"os"
	"regexp"
	"testing"
)

// Version names the newest release CHANGELOG.md dates, so that a server
// built from it reports that release, not the one before.
func TestVersion_changelog(t *testing.T) {
	log, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## (\d+\.\d+\.\d+)\b`).FindSubmatch(log)
	if m == nil {
		t.Fatal("CHANGELOG.md dates no release")
	}
	if got := string(m[1]); got != Version {
		t.Errorf("CHANGELOG.md's newest release is %s, Version is %s", got, Version)
	}
}
