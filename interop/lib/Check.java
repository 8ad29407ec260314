// The environment run.sh gives every check (see ../README.md), and small
// assertions whose message says what was wrong, for the Java checks.

import java.util.Map;

public final class Check {
    private Check() {}

    /** What a check throws when the server did not do what it should. */
    public static final class Failed extends AssertionError {
        private static final long serialVersionUID = 1L;

        Failed(String msg) {
            super(msg);
        }
    }

    /** A block of a check that may throw. */
    public interface Block {
        void run() throws Exception;
    }

    /** need returns the environment variable name, and throws when run.sh did not set it. */
    public static String need(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException(name + " is not set: run the check through interop/run.sh");
        }
        return v;
    }

    /** ok throws msg unless cond holds. */
    public static void ok(boolean cond, String msg) {
        if (!cond) {
            throw new Failed(msg);
        }
    }

    /** fail throws msg. */
    public static void fail(String msg) {
        throw new Failed(msg);
    }

    /** equal throws unless got equals want. */
    public static void equal(Object got, Object want, String what) {
        if (got == null ? want != null : !got.equals(want)) {
            throw new Failed(what + ": got " + got + ", want " + want);
        }
    }

    /** objectSchema throws unless schema is a JSON Schema of an object with properties. */
    public static void objectSchema(String what, Map<String, Object> schema) {
        ok(schema != null && "object".equals(schema.get("type")) && schema.get("properties") instanceof Map,
                what + " " + schema + ", want an object schema with properties");
    }

    /** verdict throws unless structured is a trust answer with status want, a confidence and evidence. */
    public static void verdict(String what, Object structured, String want) {
        ok(structured instanceof Map, what + ": no structured content, got " + structured);
        Map<?, ?> out = (Map<?, ?>) structured;
        equal(out.get("status"), want, what + ": status");
        ok(out.get("confidence") instanceof Number && out.get("evidence") != null,
                what + ": no confidence or evidence in " + out);
    }

    /**
     * step runs block, and names what the check was doing in any error it
     * throws that is not already a Failed (an SDK's or a connection's).
     */
    public static void step(String what, Block block) throws Exception {
        try {
            block.run();
        } catch (Failed f) {
            throw f;
        } catch (Exception e) {
            Failed f = new Failed(what + ": " + e.getClass().getSimpleName() + ": " + e.getMessage());
            f.initCause(e);
            throw f;
        }
    }

    /**
     * main runs the check whose class is named first, with the rest of the
     * arguments. The last line of stderr is "why: <the reason on one line>"
     * on a failure; the process then exits, whatever threads the check left.
     */
    public static void main(String[] args) {
        int status = 0;
        try {
            Class.forName(args[0]).getMethod("main", String[].class)
                    .invoke(null, (Object) java.util.Arrays.copyOfRange(args, 1, args.length));
        } catch (Throwable t) {
            status = 1;
            Throwable err = t instanceof java.lang.reflect.InvocationTargetException && t.getCause() != null ? t.getCause() : t;
            err.printStackTrace();
            String why = String.valueOf(err.getMessage()).replaceAll("\\s+", " ").trim();
            if (!(err instanceof Failed)) {
                why = err.getClass().getName() + ": " + why;
            }
            System.err.println("why: " + why);
        }
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(status);
    }
}
