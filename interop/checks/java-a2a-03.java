// libraries: java/a2a-0.3
//
// The A2A Java SDK's client of A2A 0.3 (a2a-java-sdk-client 0.3.3.Final,
// the newest 0.3 release): A2ACardResolver reads the card at
// /.well-known/agent-card.json as a 0.3 client does (no A2A-Version: the
// card of both versions), the client builder picks its url over
// preferredTransport JSONRPC, and the SDK's AuthInterceptor sends the key
// under the card's bearer scheme; a true and a false claim sent with
// message/send come back as completed tasks whose data part reads VALID
// and INVALID, with a confidence and evidence; tasks/get reads the first
// task back; tasks/get of a task the server never had is the SDK's
// TaskNotFoundError.

import io.a2a.A2A;
import io.a2a.client.Client;
import io.a2a.client.ClientEvent;
import io.a2a.client.TaskEvent;
import io.a2a.client.config.ClientConfig;
import io.a2a.client.http.A2ACardResolver;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfig;
import io.a2a.client.transport.spi.interceptors.auth.AuthInterceptor;
import io.a2a.spec.AgentCard;
import io.a2a.spec.AgentSkill;
import io.a2a.spec.DataPart;
import io.a2a.spec.Task;
import io.a2a.spec.TaskNotFoundError;
import io.a2a.spec.TaskQueryParams;
import io.a2a.spec.TaskState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

class Main {
    public static void main(String[] args) throws Exception {
        String base = Check.need("VOUCH_BASE_URL").replaceAll("/+$", "");
        String key = Check.need("VOUCH_API_KEY");

        AgentCard[] card = new AgentCard[1];
        Check.step("resolving the agent card of " + base, () -> card[0] = new A2ACardResolver(base).getAgentCard());
        Check.equal(List.of(card[0].url(), card[0].preferredTransport()), List.of(base + "/a2a", "JSONRPC"), "card url and transport");
        Check.equal(card[0].skills().stream().map(AgentSkill::id).toList(), A2ACheck.SKILLS, "card skills");

        // The method of every call, and whether it carried the key.
        List<List<Object>> sent = new ArrayList<>();
        var record = A2ACheck.recorder(key, sent);
        var transport = new JSONRPCTransportConfig();
        transport.setInterceptors(List.of(new AuthInterceptor((scheme, context) -> "bearer".equals(scheme) ? key : null), record));
        Client client = Client.builder(card[0])
                .clientConfig(new ClientConfig.Builder().setStreaming(false).build())
                .withTransport(JSONRPCTransport.class, transport)
                .build();

        List<Task> tasks = new ArrayList<>();
        for (var c : List.of(List.of("17 * 3 = 51", "VALID"), List.of("17 * 3 = 50", "INVALID"))) {
            String claim = c.get(0);
            List<ClientEvent> events = new ArrayList<>();
            List<Throwable> errors = new ArrayList<>();
            var message = A2A.toUserMessage("Validate the claimed result \"" + claim + "\" for the task \"What is 17 * 3?\"");
            Check.step("message/send " + claim, () -> client.sendMessage(message, List.of((event, agentCard) -> events.add(event)), errors::add, null));
            Check.ok(errors.isEmpty(), "message/send " + claim + ": errors " + errors);
            Check.ok(events.size() == 1 && events.get(0) instanceof TaskEvent, "message/send " + claim + ": answers " + events + ", want one task");
            Task task = ((TaskEvent) events.get(0)).getTask();
            Map<?, ?> answer = answerOf(task);
            Check.equal(answer.get("status"), c.get(1), "message/send " + claim + ": status");
            Check.ok(answer.get("confidence") instanceof Number && answer.get("evidence") != null,
                    "message/send " + claim + ": no confidence or evidence in " + answer);
            tasks.add(task);
        }

        Task[] got = new Task[1];
        Check.step("tasks/get " + tasks.get(0).getId(), () -> got[0] = client.getTask(new TaskQueryParams(tasks.get(0).getId()), null));
        Check.equal(got[0].getId(), tasks.get(0).getId(), "tasks/get: task id");
        Check.equal(answerOf(got[0]).get("status"), "VALID", "tasks/get: status");

        try {
            Task t = client.getTask(new TaskQueryParams("no-such-task"), null);
            Check.fail("tasks/get of an unknown task: no error, got " + t);
        } catch (Exception err) {
            Check.ok(A2ACheck.causedBy(err, TaskNotFoundError.class), "tasks/get of an unknown task: " + err + ", want TaskNotFoundError");
        }
        client.close();

        Check.equal(sent, List.of(List.of("message/send", true), List.of("message/send", true), List.of("tasks/get", true), List.of("tasks/get", true)),
                "calls (method, with the key)");
    }

    // answerOf returns the data part of a completed task's artifact.
    static Map<?, ?> answerOf(Task task) {
        Check.ok(task.getId() != null && task.getStatus().state() == TaskState.COMPLETED,
                "task " + task.getId() + " " + task.getStatus().state() + ", want COMPLETED");
        for (var artifact : task.getArtifacts()) {
            for (var part : artifact.parts()) {
                if (part instanceof DataPart d) {
                    return d.getData();
                }
            }
        }
        Check.fail("task " + task.getId() + ": no data part in the artifacts");
        return null;
    }
}
