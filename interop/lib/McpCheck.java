// The Java MCP checks, on the official Java SDK (io.modelcontextprotocol.sdk:mcp):
// its two clients, the session client, which connects with the initialize
// handshake, and the stateless client of MCP 2026-07-28, which asks
// server/discover, each exercising validate_claim as a client of vouch would.

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.modern.McpException;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.List;
import java.util.Map;

public final class McpCheck {
    private McpCheck() {}

    /** The tools examples/server lists. */
    static final List<String> TOOL_NAMES = List.of("arbitrate", "delegate_task", "factcheck", "get_receipt",
            "report_outcome", "validate_claim", "verify_receipt");

    /**
     * The claims validate_claim is asked about, and their verdicts, on the
     * safe tier (3 runs, majority): one of the demo workers answers wrong
     * one call in three, which a single run would report.
     */
    static final List<List<String>> CLAIMS = List.of(List.of("17 * 3 = 51", "VALID"), List.of("17 * 3 = 50", "INVALID"));

    /** A policy not in the list: a tool error naming the argument. */
    static final Map<String, Object> BAD_POLICY = Map.of("claimed_result", "17 * 3 = 51", "policy", "cheapest");

    static Map<String, Object> safe(String claim) {
        return Map.of("claimed_result", claim, "policy", "safe");
    }

    /**
     * session connects the session client over transport with the
     * initialize handshake, checks that the server names itself, lists the
     * tools with object schemas for input and output, answers a true and a
     * false claim in the structured content, a bad policy with a tool error
     * naming it, and an unknown tool with invalid params naming it.
     */
    static void session(McpClientTransport transport) {
        try (McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build()) {
            var init = client.initialize();
            Check.equal(init.serverInfo().name(), "vouch demo server", "initialize: server name");
            Check.ok(init.protocolVersion() != null && !init.protocolVersion().isEmpty(), "initialize: no protocol version");
            System.out.println("session client: protocol " + init.protocolVersion());

            var tools = client.listTools().tools();
            Check.equal(tools.stream().map(McpSchema.Tool::name).sorted().toList(), TOOL_NAMES, "tools/list");
            for (var t : tools) {
                Check.objectSchema(t.name() + ": input schema", t.inputSchema());
                Check.objectSchema(t.name() + ": output schema", t.outputSchema());
            }

            for (var c : CLAIMS) {
                var res = client.callTool(call("validate_claim", safe(c.get(0))));
                String what = "validate_claim " + safe(c.get(0));
                Check.ok(!Boolean.TRUE.equals(res.isError()), what + ": tool error " + text(res.content()));
                Check.verdict(what, res.structuredContent(), c.get(1));
            }

            var res = client.callTool(call("validate_claim", BAD_POLICY));
            String what = "validate_claim " + BAD_POLICY;
            Check.ok(Boolean.TRUE.equals(res.isError()), what + ": answered " + res.structuredContent() + ", want a tool error");
            Check.ok(text(res.content()).contains("policy"), what + ": the tool error " + text(res.content()) + " does not name policy");

            try {
                var got = client.callTool(call("no_such_tool", Map.of()));
                Check.fail("tools/call of no_such_tool: no error, got " + text(got.content()));
            } catch (McpError err) {
                var e = err.getJsonRpcError();
                unknownTool(e.code(), e.message());
            }
        }
    }

    /**
     * stateless does what session does with the stateless client over
     * transport, which asks server/discover and sends each request on its
     * own.
     */
    static void stateless(io.modelcontextprotocol.modern.client.transport.McpClientTransport transport) {
        var client = io.modelcontextprotocol.modern.client.McpClient.sync(transport)
                .callTimeout(Duration.ofSeconds(60))
                .build();
        var discovered = client.discover();
        Check.ok(discovered.supportedVersions() != null && discovered.supportedVersions().contains("2026-07-28"),
                "server/discover: versions " + discovered.supportedVersions() + ", want 2026-07-28 among them");
        System.out.println("stateless client: server/discover lists " + discovered.supportedVersions());

        var tools = client.listTools().list().tools();
        Check.equal(tools.stream().map(io.modelcontextprotocol.modern.McpSchema.Tool::name).sorted().toList(), TOOL_NAMES, "tools/list");
        for (var t : tools) {
            Check.objectSchema(t.name() + ": input schema", t.inputSchema());
            Check.objectSchema(t.name() + ": output schema", t.outputSchema());
        }

        for (var c : CLAIMS) {
            var res = client.tool("validate_claim").arguments(safe(c.get(0))).call();
            String what = "validate_claim " + safe(c.get(0));
            Check.ok(!Boolean.TRUE.equals(res.isError()), what + ": tool error " + text(res));
            Check.verdict(what, res.structuredContent(), c.get(1));
        }

        var res = client.tool("validate_claim").arguments(BAD_POLICY).call();
        String what = "validate_claim " + BAD_POLICY;
        Check.ok(Boolean.TRUE.equals(res.isError()), what + ": answered " + res.structuredContent() + ", want a tool error");
        Check.ok(text(res).contains("policy"), what + ": the tool error " + text(res) + " does not name policy");

        // This client calls by name only the tools the server listed: the
        // unknown one is named by a tool of the client's own.
        var unlisted = io.modelcontextprotocol.modern.McpSchema.Tool.builder("no_such_tool", Map.of("type", "object")).build();
        try {
            var got = client.tool(unlisted).arguments(Map.of()).call();
            Check.fail("tools/call of no_such_tool: no error, got " + text(got));
        } catch (McpException err) {
            unknownTool(err.error().code(), err.error().message());
        }
    }

    static void unknownTool(Integer code, String message) {
        Check.ok(code != null && code == -32602 && message != null && message.contains("no_such_tool"),
                "tools/call of no_such_tool: error " + code + " " + message + ", want invalid params (-32602) naming no_such_tool");
    }

    static McpSchema.CallToolRequest call(String tool, Map<String, Object> arguments) {
        return McpSchema.CallToolRequest.builder(tool).arguments(arguments).build();
    }

    /** text is the first text content of a session client's tool result. */
    static String text(List<McpSchema.Content> content) {
        for (var c : content) {
            if (c instanceof McpSchema.TextContent t) {
                return t.text();
            }
        }
        return "";
    }

    /** text is the first text content of a stateless client's tool result. */
    static String text(io.modelcontextprotocol.modern.McpSchema.CallToolResult res) {
        for (var c : res.content()) {
            if (c instanceof io.modelcontextprotocol.modern.McpSchema.TextContent t) {
                return t.text();
            }
        }
        return "";
    }
}
