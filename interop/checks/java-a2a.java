// The A2A Java SDK (io.github.a2asdk:a2a-java-sdk-client 1.0.0.Alpha3, the
// newest release, which speaks A2A 1.0): A2ACardResolver resolves the card
// at /.well-known/agent-card.json, asking for version 1.0 in the
// A2A-Version header as the official JavaScript client does, and reads it
// with protobuf's JSON parser, which refuses a member it does not know
// (the card for 0.3 clients has 0.3's members beside 1.0's); the client
// builder picks the card's JSON-RPC interface of version 1.0, and the
// SDK's AuthInterceptor sends the key under the card's bearer scheme;
// GetTask of a task the server never had is the SDK's TaskNotFoundError.
//
// It sends no message: this release writes SendMessage's configuration
// with blocking, a member of 1.0's drafts that the agent refuses as
// invalid params, and its reader of a data part fails on a JSON null,
// which the trust answer holds (retry_instructions); the SDK's main
// branch writes returnImmediately but reads a null as this release does.
// The JavaScript and Python checks send messages over 1.0.

import io.a2a.client.Client;
import io.a2a.client.config.ClientConfig;
import io.a2a.client.http.A2ACardResolver;
import io.a2a.client.http.JdkA2AHttpClient;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfigBuilder;
import io.a2a.client.transport.spi.interceptors.auth.AuthInterceptor;
import io.a2a.spec.AgentCard;
import io.a2a.spec.AgentSkill;
import io.a2a.spec.Task;
import io.a2a.spec.TaskNotFoundError;
import io.a2a.spec.TaskQueryParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

class Main {
    public static void main(String[] args) throws Exception {
        String base = Check.need("VOUCH_BASE_URL").replaceAll("/+$", "");
        String key = Check.need("VOUCH_API_KEY");

        AgentCard[] card = new AgentCard[1];
        Check.step("resolving the agent card of " + base, () -> card[0] = new A2ACardResolver(
                new JdkA2AHttpClient(), base, "", null, Map.of("A2A-Version", "1.0")).getAgentCard());
        var interfaces = card[0].supportedInterfaces().stream()
                .map(i -> List.of(i.protocolBinding(), String.valueOf(i.protocolVersion()), i.url())).toList();
        Check.ok(interfaces.contains(List.of("JSONRPC", "1.0", base + "/a2a")),
                "card interfaces " + interfaces + ", want JSONRPC 1.0 at " + base + "/a2a");
        Check.equal(card[0].skills().stream().map(AgentSkill::id).toList(), A2ACheck.SKILLS, "card skills");

        // The method of every call, and whether it carried the key.
        List<List<Object>> sent = new ArrayList<>();
        var record = A2ACheck.recorder(key, sent);
        var transport = new JSONRPCTransportConfigBuilder()
                .addInterceptor(new AuthInterceptor((scheme, context) -> "bearer".equals(scheme) ? key : null))
                .addInterceptor(record);
        Client client = Client.builder(card[0])
                .clientConfig(new ClientConfig.Builder().setStreaming(false).build())
                .withTransport(JSONRPCTransport.class, transport)
                .build();

        // No message is sent: this release cannot read this agent's
        // answers (see the file's comment).
        try {
            Task t = client.getTask(new TaskQueryParams("no-such-task"), null);
            Check.fail("GetTask of an unknown task: no error, got " + t);
        } catch (Exception err) {
            Check.ok(A2ACheck.causedBy(err, TaskNotFoundError.class), "GetTask of an unknown task: " + err + ", want TaskNotFoundError");
        }
        client.close();

        Check.equal(sent, List.of(List.of("GetTask", true)), "calls (method, with the key)");
    }
}
