// What the Java A2A checks share, on the A2A Java SDK's client of either
// version (its interceptor classes are the same in both).

import io.a2a.client.transport.spi.interceptors.ClientCallContext;
import io.a2a.client.transport.spi.interceptors.ClientCallInterceptor;
import io.a2a.client.transport.spi.interceptors.PayloadAndHeaders;
import io.a2a.client.transport.spi.interceptors.auth.AuthInterceptor;
import io.a2a.spec.AgentCard;
import java.util.List;
import java.util.Map;

public final class A2ACheck {
    private A2ACheck() {}

    /** The skills of the card examples/server serves, in its order. */
    static final List<String> SKILLS = List.of("validate_claim", "delegate_task", "arbitrate", "factcheck");

    /**
     * recorder returns an interceptor that adds to sent the method of
     * every call and whether it carried key as a bearer token; added after
     * the SDK's AuthInterceptor, it sees the headers that one set.
     */
    static ClientCallInterceptor recorder(String key, List<List<Object>> sent) {
        return new ClientCallInterceptor() {
            @Override
            public PayloadAndHeaders intercept(String method, Object payload, Map<String, String> headers,
                    AgentCard agentCard, ClientCallContext context) {
                sent.add(List.of(method, ("Bearer " + key).equals(headers.get(AuthInterceptor.AUTHORIZATION))));
                return new PayloadAndHeaders(payload, headers);
            }
        };
    }

    /** causedBy reports whether err or one of its causes is a want. */
    static boolean causedBy(Throwable err, Class<?> want) {
        for (Throwable t = err; t != null; t = t.getCause()) {
            if (want.isInstance(t)) {
                return true;
            }
        }
        return false;
    }
}
