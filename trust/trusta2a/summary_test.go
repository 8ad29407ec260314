package trusta2a_test

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestMessageSend_summaryNamesTheDissent: the text part beside an answer
// says what the MCP tools say of it, the dissenting run among it.
func TestMessageSend_summaryNamesTheDissent(t *testing.T) {
	valid := routertest.Verdict(router.VerdictValid)
	f := newFixture(t, trusta2a.Config{}, valid, valid, routertest.Verdict(router.VerdictInvalid))
	task, err := send(t, f.client(t, "demo-key", nil), a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51" with policy safe`})
	if err != nil {
		t.Fatal(err)
	}
	answer(t, task)
	var text string
	for _, p := range task.Artifacts[0].Parts {
		if tp, ok := p.(a2a.TextPart); ok {
			text = tp.Text
		}
	}
	for _, want := range []string{"VALID, confidence", "3 runs", "dissent: session 3 said INVALID"} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary %q does not say %q", text, want)
		}
	}
}
