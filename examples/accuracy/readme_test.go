package main

import (
	"os"
	"regexp"
	"testing"
)

// TestREADME_flags: the README names every flag the program defines, so
// that its list of flags is the program's.
func TestREADME_flags(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := regexp.MustCompile(`flag\.[A-Z]\w*\("([a-z-]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(defined) == 0 {
		t.Fatal("main.go defines no flag: the pattern no longer reads it")
	}
	for _, m := range defined {
		if !regexp.MustCompile("`-" + regexp.QuoteMeta(m[1]) + "[` ]").Match(readme) {
			t.Errorf("README.md does not name the flag -%s", m[1])
		}
	}
}
