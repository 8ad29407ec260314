package trustmcp_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// toolRow matches a row of a documented table of the MCP tools: the
// tool's name and its arguments' cell.
var toolRow = regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([^|]*) \\|")

// TestDocs_toolArguments: the tables of the MCP tools in docs/GUIDE.md
// and docs/INTERFACE.md name every argument each tool takes, so that a
// reader learns from them all a tool can be asked.
func TestDocs_toolArguments(t *testing.T) {
	t.Parallel()
	res, err := connect(t, newServer(t)).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{"../../docs/GUIDE.md", "../../docs/INTERFACE.md"} {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		documented := map[string][]string{} // each tool's arguments as the table names them
		for _, m := range toolRow.FindAllStringSubmatch(string(text), -1) {
			for _, arg := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[2], -1) {
				documented[m[1]] = append(documented[m[1]], arg[1])
			}
		}
		for _, tool := range res.Tools {
			schema, _ := tool.InputSchema.(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			var missing []string
			for arg := range props {
				if !slices.Contains(documented[tool.Name], arg) {
					missing = append(missing, arg)
				}
			}
			slices.Sort(missing)
			if diff := cmp.Diff([]string(nil), missing); diff != "" {
				t.Errorf("%s: the table's row of %s leaves out arguments (-want +got):\n%s", strings.TrimPrefix(doc, "../../"), tool.Name, diff)
			}
		}
	}
}
