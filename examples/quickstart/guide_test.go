package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Only these differ from run to run: the receipt's id and the key that
// signs it, new in each run.
var (
	receiptID = regexp.MustCompile(`rcpt_[a-z2-7]{26}`)
	publicKey = regexp.MustCompile(`ed25519:[A-Za-z0-9_-]{43}`)
)

// mask replaces the receipt ids and keys of text with placeholders.
func mask(text string) string {
	text = receiptID.ReplaceAllString(text, "rcpt_<id>")
	return publicKey.ReplaceAllString(text, "ed25519:<key>")
}

// TestGUIDE_output: docs/GUIDE.md shows the quickstart's whole output in
// "The quickstart, explained", and says that only the receipt id and key
// differ from run to run. The block must be what run prints, line for
// line, once those two are masked in both.
func TestGUIDE_output(t *testing.T) {
	guide, err := os.ReadFile("../../docs/GUIDE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(guide), "\n## The quickstart, explained\n")
	if !ok {
		t.Fatal(`docs/GUIDE.md has no "## The quickstart, explained" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	block, ok := plainBlock(section)
	if !ok {
		t.Fatal(`docs/GUIDE.md: "## The quickstart, explained" has no plain code block with the output`)
	}
	if !receiptID.MatchString(block) || !publicKey.MatchString(block) {
		t.Errorf("the GUIDE's block shows no receipt id or no key; the masks no longer fit:\n%s", block)
	}
	var out bytes.Buffer
	if err := run(context.Background(), &out, false); err != nil {
		t.Fatal(err)
	}
	want := strings.Split(mask(strings.TrimSuffix(out.String(), "\n")), "\n")
	got := strings.Split(mask(block), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("docs/GUIDE.md's quickstart output differs from the program's (-program +guide); paste a fresh run of go run ./examples/quickstart:\n%s", diff)
	}
}

// plainBlock returns the first code block of text whose fence names no
// language, without its fences.
func plainBlock(text string) (string, bool) {
	var block []string
	lang, in := "", false
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case !in && strings.HasPrefix(line, "```"):
			lang, in = strings.TrimPrefix(line, "```"), true
		case in && line == "```":
			if lang == "" {
				return strings.Join(block, "\n"), true
			}
			in = false
		case in && lang == "":
			block = append(block, line)
		}
	}
	return "", false
}
