// The MCP Java SDK (io.modelcontextprotocol.sdk:mcp) over Streamable HTTP
// (/mcp, bearer key), with both of its clients: the session client (the
// initialize handshake) and the stateless client of MCP 2026-07-28
// (server/discover), each through McpCheck's steps.

import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.modern.client.transport.HttpClientMcpTransport;
import io.modelcontextprotocol.modern.client.transport.McpHttpRequestCustomizer;
import java.net.http.HttpRequest;

class Main {
    public static void main(String[] args) throws Exception {
        String base = Check.need("VOUCH_BASE_URL").replaceAll("/+$", "");
        String bearer = "Bearer " + Check.need("VOUCH_API_KEY");
        Check.step("the session client over Streamable HTTP at " + base + "/mcp", () -> McpCheck.session(
                HttpClientStreamableHttpTransport.builder(base)
                        .endpoint("/mcp")
                        .requestBuilder(HttpRequest.newBuilder().header("Authorization", bearer))
                        .build()));
        Check.step("the stateless client over HTTP at " + base + "/mcp", () -> McpCheck.stateless(
                HttpClientMcpTransport.builder(base + "/mcp")
                        .requestCustomizer(McpHttpRequestCustomizer.fromSync(
                                (request, headers, context) -> headers.set("Authorization", bearer)))
                        .build()));
    }
}
