package vouch

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goTestRun matches a documented command that runs some tests of some
// packages: go test ... -run PATTERN (or -bench, -fuzz) ... ./pkg ...
var goTestRun = regexp.MustCompile("go test [^`\n]*")

// testFunc matches the declaration of a test, fuzz target, example or
// benchmark.
var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Example|Benchmark)\w*)\(`)

// TestDocs_commandsRunTests: every go test command of the docs that
// selects tests by a pattern (-run, -bench, -fuzz) selects at least one
// in the packages it names, and a -fuzz pattern one fuzz target in each,
// as go test requires. A test renamed or moved leaves its command passing
// on no test at all, and the guarantee it proves unproven.
func TestDocs_commandsRunTests(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	readmes, _ := filepath.Glob("examples/*/README.md")
	docs = append(append(docs, "README.md"), readmes...)
	checked, names := 0, map[string][]string{} // the tests of each package folder read
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var cmds []string // each go test command, chained ones apart
		for _, line := range goTestRun.FindAllString(string(text), -1) {
			for _, cmd := range strings.Split(line, "&&") {
				if cmd = strings.TrimSpace(cmd); strings.HasPrefix(cmd, "go test ") {
					cmds = append(cmds, cmd)
				}
			}
		}
		for _, cmd := range cmds {
			pattern, flag, pkgs := selection(cmd)
			if pattern == "" || len(pkgs) == 0 {
				continue
			}
			re, err := regexp.Compile(pattern)
			if err != nil {
				t.Errorf("%s: %q: the pattern %q does not compile: %v", doc, cmd, pattern, err)
				continue
			}
			checked++
			if !anyTest(t, re, pkgs, names) {
				t.Errorf("%s: %q selects no test in %v", doc, cmd, pkgs)
				continue
			}
			// Go prints "[no tests to run]" for a package the pattern
			// selects nothing in, and an alternative that matches no test
			// runs nothing the doc names.
			for _, pkg := range pkgs {
				if !anyTest(t, re, []string{pkg}, names) {
					t.Errorf("%s: %q selects no test in %s", doc, cmd, pkg)
				}
			}
			for _, alt := range alternatives(pattern) {
				if are, err := regexp.Compile(alt); err == nil && !anyTest(t, are, pkgs, names) {
					t.Errorf("%s: %q: its alternative %q selects no test in %v", doc, cmd, alt, pkgs)
				}
			}
			if flag != "-fuzz" {
				continue
			}
			for _, pkg := range pkgs {
				var targets []string
				for _, name := range names[pkg] {
					if strings.HasPrefix(name, "Fuzz") && re.MatchString(name) {
						targets = append(targets, name)
					}
				}
				if len(targets) > 1 {
					t.Errorf("%s: %q matches the fuzz targets %v in %s; go test fuzzes one", doc, cmd, targets, pkg)
				}
			}
		}
	}
	t.Logf("checked %d commands", checked)
	if checked < 100 {
		t.Errorf("checked %d commands; the docs name more than a hundred", checked)
	}
}

// selection returns the pattern cmd selects tests by (-run, else -bench,
// else -fuzz; "" when it selects none, as -run '^$' alone), its flag, and
// the package folders it names.
func selection(cmd string) (pattern, flag string, pkgs []string) {
	patterns := map[string]string{}
	fields := strings.Fields(cmd)
	for i, f := range fields {
		for _, flag := range []string{"-run", "-bench", "-fuzz"} {
			v, ok := strings.CutPrefix(f, flag+"=")
			if !ok && f == flag && i+1 < len(fields) {
				v, ok = fields[i+1], true
			}
			if ok {
				patterns[flag] = strings.ReplaceAll(strings.Trim(v, `'"`), `\|`, "|")
			}
		}
		if (f == "." || strings.HasPrefix(f, "./")) && !strings.Contains(f, "...") {
			if fi, err := os.Stat(f); err == nil && fi.IsDir() {
				pkgs = append(pkgs, f)
			}
		}
	}
	for _, flag := range []string{"-run", "-bench", "-fuzz"} {
		if p := patterns[flag]; p != "" && p != "^$" {
			return p, flag, pkgs
		}
	}
	return "", "", pkgs
}

// alternatives returns the top-level alternatives of pattern, a go test
// selection, each cut at its first top-level "/" (what follows selects
// subtests): "TestA|TestB_(x|y)/z" gives "TestA" and "TestB_(x|y)".
func alternatives(pattern string) []string {
	var alts []string
	depth, class, start, cut := 0, false, 0, -1
	end := func(i int) {
		if cut < 0 {
			cut = i
		}
		alts = append(alts, pattern[start:cut])
		start, cut = i+1, -1
	}
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++ // an escaped character is a literal
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && c == '|':
			end(i)
		case depth == 0 && c == '/' && cut < 0:
			cut = i
		}
	}
	end(len(pattern))
	return alts
}

// anyTest reports whether re matches the name of a test declared in the
// _test.go files of one of the folders pkgs; names keeps each folder's
// tests once read.
func anyTest(t *testing.T, re *regexp.Regexp, pkgs []string, names map[string][]string) bool {
	for _, pkg := range pkgs {
		if _, ok := names[pkg]; !ok {
			names[pkg] = testsIn(t, pkg)
		}
		for _, name := range names[pkg] {
			if re.MatchString(name) {
				return true
			}
		}
	}
	return false
}

// testsIn returns the names of the tests declared in the _test.go files
// of the folder pkg.
func testsIn(t *testing.T, pkg string) []string {
	files, err := filepath.Glob(filepath.Join(pkg, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// pasted matches a shell redirection into a file of the working
// directory, as the docs' curls write their answers: "> receipt.json".
var pasted = regexp.MustCompile(`>\s*([A-Za-z0-9_.-]+\.(?:json|txt|pub|key|yaml))\b`)

// TestDocs_pastedFilesIgnored: every file the docs and the demo server's
// banner have a reader write in the repository's directory by pasting
// their commands (trust.json, receipt.json, proof.json, output.json) is
// ignored by git, by an entry of .gitignore anchored at the root, so that
// a newcomer who pastes them does not commit them.
func TestDocs_pastedFilesIgnored(t *testing.T) {
	t.Parallel()
	ignore, err := os.ReadFile(".gitignore")
	if err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{}
	for line := range strings.Lines(string(ignore)) {
		ignored[strings.TrimSpace(line)] = true
	}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	readmes, _ := filepath.Glob("examples/*/README.md")
	docs = append(append(docs, "README.md", "examples/server/banner.go"), readmes...)
	found := map[string]bool{}
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pasted.FindAllStringSubmatch(string(text), -1) {
			if !found[m[1]] && !ignored["/"+m[1]] {
				t.Errorf("%s has a reader write %s in the repository's directory; .gitignore does not list /%s", doc, m[1], m[1])
			}
			found[m[1]] = true
		}
	}
	for _, name := range []string{"trust.json", "receipt.json", "proof.json"} {
		if !found[name] {
			t.Errorf("the docs no longer write %s: the pattern misses their redirections", name)
		}
	}
}
