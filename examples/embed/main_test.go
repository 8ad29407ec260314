package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADME checks that the program shown in the README's "A whole
// program" section is this one, byte for byte, so that the README shows a
// program that compiles and runs.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### A whole program\n")
	if !ok {
		t.Fatal(`README.md has no "### A whole program" section`)
	}
	_, block, ok := strings.Cut(section, "\n```go\n")
	if ok {
		block, _, ok = strings.Cut(block, "\n```\n")
	}
	if !ok {
		t.Fatal(`the README's "A whole program" section has no go code block`)
	}
	if block+"\n" != string(src) {
		t.Errorf("the README's program differs from examples/embed/main.go; copy main.go into the README")
	}
}

func Example() {
	main()
	// Output:
	// INVALID drops 2 - receipt verified
}
