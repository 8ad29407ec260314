package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// stdioServerEnv, set to 1, makes the test binary the -mcp-stdio server
// of TestRun_mcpStdio instead of running the tests.
const stdioServerEnv = "VOUCH_TEST_MCP_STDIO_SERVER"

// TestMain runs the tests, failing them if any goroutine outlives them,
// or serves MCP on stdio for TestRun_mcpStdio.
func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		if err := run(context.Background(), []string{"-mcp-stdio", "-slow-session", testSlowSession}, noEnv, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
