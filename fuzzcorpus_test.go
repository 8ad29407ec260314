package vouch

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFuzzTargetsHaveCorpus: every fuzz target of the module has seeds
// in its package's testdata/fuzz/<target>, as docs/RELIABILITY.md says
// of them, so that go test runs them and CI's short fuzzing starts from
// them.
func TestFuzzTargetsHaveCorpus(t *testing.T) {
	t.Parallel()
	targets := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			name := m[1]
			if !strings.HasPrefix(name, "Fuzz") {
				continue
			}
			targets++
			seeds, err := os.ReadDir(filepath.Join(filepath.Dir(path), "testdata", "fuzz", name))
			if err != nil || len(seeds) == 0 {
				t.Errorf("%s: %s has no seeds in %s", path, name, filepath.Join(filepath.Dir(path), "testdata", "fuzz", name))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if targets == 0 {
		t.Fatal("found no fuzz target")
	}
}
