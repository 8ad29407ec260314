package x402

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMeteredReason_evm: every reason package evm's facilitators give is
// counted under its own name, not as reasonOther.
func TestMeteredReason_evm(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("evm", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var n int
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Reason") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("evm.%s is not a string literal", id.Name)
						continue
					}
					reason, _ := strconv.Unquote(lit.Value)
					n++
					if got := meteredReason(reason); got != reason {
						t.Errorf("meteredReason(evm.%s %q) = %q", id.Name, reason, got)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Error("found no Reason constant in package evm")
	}
	if got := meteredReason("made_up"); got != reasonOther {
		t.Errorf("meteredReason(%q) = %q, want %q", "made_up", got, reasonOther)
	}
}
