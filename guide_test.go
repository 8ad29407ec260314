package vouch

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// The functions below hold the Go snippets of docs/GUIDE.md between the
// markers "// GUIDE.md begins" and "// GUIDE.md ends", indented one tab
// deeper than the guide shows them: TestGuide_snippets checks that each
// snippet of the guide is one of them, so that every snippet compiles
// against the current API, and runs the ones that do something.

// guideUsingIt is the snippet of the guide's "Using it": a validation on
// three of the host's workers, settled when VALID.
func guideUsingIt(ctx context.Context, text, summary string, judge router.WorkerFunc, settle func()) error {
	judgeWithModelA, judgeWithModelB, judgeWithModelC := judge, judge, judge
	// GUIDE.md begins
	engine, err := router.NewEngine([]router.Session{
		{ID: 1, Pool: "a", Worker: router.WorkerFunc(judgeWithModelA)},
		{ID: 2, Pool: "b", Worker: router.WorkerFunc(judgeWithModelB)},
		{ID: 3, Pool: "c", Worker: router.WorkerFunc(judgeWithModelC)},
	})
	if err != nil {
		return err
	}
	svc, err := trust.New(engine)
	if err != nil {
		return err
	}
	resp, err := svc.Call(ctx, &trust.Request{
		Mode:   trust.ModeValidation,
		Policy: trust.PolicySafe, // 3 replicas
		Task:   trust.Task{Type: "summary", Input: router.NewStringInput(text), ClaimedResult: trust.JSON(summary)},
	})
	if err != nil {
		return err // a *trust.Error: an RFC 9457 problem naming the failing fields
	}
	if resp.Status == trust.StatusValid {
		settle()
	}
	// GUIDE.md ends
	return nil
}

// guideJudged is the snippet of the guide's "Free-text delegations": a
// delegation whose answer the other sessions judge.
func guideJudged() *trust.Request {
	// GUIDE.md begins
	req := &trust.Request{Mode: trust.ModeDelegation, Policy: trust.PolicyAdaptive,
		Task:       trust.Task{Type: "qa", Input: router.NewStringInput("Who won the 1903 physics Nobel?")},
		Delegation: &trust.DelegationOptions{Agreement: trust.AgreementJudged}}
	// GUIDE.md ends
	return req
}

// goBlock matches a go code block of a Markdown file.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```\n")

// TestGuide_snippets: every go code block of docs/GUIDE.md is a snippet
// held above, so it compiles against the current API; the "Using it"
// snippet settles a claim its workers find VALID and not one they find
// INVALID, and the judged delegation's request is one the service accepts.
func TestGuide_snippets(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile("docs/GUIDE.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("guide_test.go")
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, part := range strings.Split(string(src), "\t// GUIDE.md begins\n")[1:] {
		snippet, _, ok := strings.Cut(part, "\t// GUIDE.md ends\n")
		if !ok {
			t.Fatal(`guide_test.go: a "GUIDE.md begins" marker has no "GUIDE.md ends"`)
		}
		lines := strings.SplitAfter(snippet, "\n")
		for i, line := range lines {
			lines[i] = strings.TrimPrefix(line, "\t")
		}
		held[strings.Join(lines, "")] = true
	}
	blocks := goBlock.FindAllStringSubmatch(string(guide), -1)
	if len(blocks) == 0 {
		t.Fatal("docs/GUIDE.md has no go code block")
	}
	for _, b := range blocks {
		if !held[b[1]] {
			t.Errorf("docs/GUIDE.md shows a go snippet that guide_test.go does not hold, so nothing compiles it:\n%s", b[1])
		}
	}

	for _, c := range []struct {
		verdict router.Verdict
		settled bool
	}{{router.VerdictValid, true}, {router.VerdictInvalid, false}} {
		judge := func(context.Context, *router.Job) (*router.Result, error) {
			return &router.Result{Verdict: c.verdict, Reasons: []string{"judged"}}, nil
		}
		settled := false
		err := guideUsingIt(t.Context(), "Revenue rose 12% to $4.1M.", "Revenue rose 12%.", judge, func() { settled = true })
		if err != nil {
			t.Fatalf("workers answering %s: %v", c.verdict, err)
		}
		if settled != c.settled {
			t.Errorf("workers answering %s: settled %v, want %v", c.verdict, settled, c.settled)
		}
	}
	if err := guideJudged().Validate(); err != nil {
		t.Errorf("the judged delegation's request is refused: %v", err)
	}
}
