// The MCP Java SDK over stdio, the server launched with -mcp-stdio as an
// MCP host launches it, once for each of the SDK's clients: the session
// client (the initialize handshake) and the stateless client of MCP
// 2026-07-28 (server/discover), each through McpCheck's steps.

import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.modern.client.transport.StdioMcpClientTransport;

class Main {
    public static void main(String[] args) throws Exception {
        var server = ServerParameters.builder(Check.need("VOUCH_SERVER_BIN")).args("-mcp-stdio").build();
        String how = " (" + Check.need("VOUCH_SERVER_BIN") + " -mcp-stdio)";
        Check.step("the session client over stdio" + how,
                () -> McpCheck.session(new StdioClientTransport(server, McpJsonDefaults.getMapper())));
        Check.step("the stateless client over stdio" + how, () -> {
            try (var transport = StdioMcpClientTransport.builder(server).start()) {
                McpCheck.stateless(transport);
            }
        });
    }
}
