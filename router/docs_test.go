package router_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust/agentcard"
)

// TestInterfaceDoc_listsEveryRoute checks that docs/INTERFACE.md, the
// written wire contract, names every route the router serves, the trust
// service's with its receipt log, and the agent card's paths.
func TestInterfaceDoc_listsEveryRoute(t *testing.T) {
	data, err := os.ReadFile("../docs/INTERFACE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	paths := []string{"/api/v4/trust", "/api/v4/trial/trust", "/api/v4/x402/trust", "/api/v4/receipt/{receipt_id}", receipt.VerifyPath,
		receipt.LogPath, receipt.ReceiptPath + "{receipt_id}" + receipt.ProofSuffix, receipt.ConsistencyPath,
		agentcard.WellKnownPath, agentcard.APIPath}
	for _, rt := range router.Routes() {
		paths = append(paths, rt.Path)
	}
	for _, p := range paths {
		if !strings.Contains(doc, "`"+p+"`") {
			t.Errorf("docs/INTERFACE.md does not name the route %s", p)
		}
	}
}

// TestPackageDocs_citeNoUnshippedSections checks that no Go comment
// outside tests points to a numbered section of a document the
// repository does not ship: the contract is docs/INTERFACE.md, and RFCs
// and the public x402 specification are cited by name.
func TestPackageDocs_citeNoUnshippedSections(t *testing.T) {
	section := regexp.MustCompile(`(?i)\b(sections? [0-9]|rule [0-9] of|\(an addition to [0-9])`)
	allowed := regexp.MustCompile(`RFC [0-9]+, section|docs/INTERFACE\.md[^)]*section|x402 (version [0-9] )?specification`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "//") && section.MatchString(line) && !allowed.MatchString(line) {
				t.Errorf("%s:%d cites an unshipped section: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
