package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADME checks that the program shown in the README's "Start here"
// section is this one, byte for byte, so that the README shows a program
// that compiles and runs, and that the section shows what it prints.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Start here\n")
	if !ok {
		t.Fatal(`README.md has no "## Start here" section`)
	}
	_, block, ok := strings.Cut(section, "\n```go\n")
	if ok {
		block, _, ok = strings.Cut(block, "\n```\n")
	}
	if !ok {
		t.Fatal(`the README's "Start here" section has no go code block`)
	}
	if block+"\n" != string(src) {
		t.Errorf("the README's program differs from examples/embed/main.go; copy main.go into the README")
	}
	want := "$ go run ./examples/embed\n" + output
	if !strings.Contains(section, want) {
		t.Errorf("the README's \"Start here\" section does not show the program's output:\n%s", want)
	}
}

// output is what the program prints, as Example checks.
const output = `INVALID, confidence 0.94: drops 2
receipt verified (ed25519-jcs): agreement 1.00 over 3 replicas
`

func Example() {
	main()
	// Output:
	// INVALID, confidence 0.94: drops 2
	// receipt verified (ed25519-jcs): agreement 1.00 over 3 replicas
}
