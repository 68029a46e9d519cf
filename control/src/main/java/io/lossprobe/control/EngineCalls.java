package io.lossprobe.control;

import java.io.IOException;

/**
 * Runs engine or transport code for a session: whatever it throws (a port in use, a transport that cannot do what
 * the plan asks) is the session's failure, reported to the controller, not the server's.
 */
final class EngineCalls {
    private EngineCalls() {
    }

    interface Action<T> {
        T get() throws Exception;
    }

    interface VoidAction {
        void run() throws Exception;
    }

    static void call(VoidAction a) throws IOException {
        call(() -> {
            a.run();
            return null;
        });
    }

    static <T> T call(Action<T> a) throws IOException {
        try {
            return a.get();
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(rootMessage(e), e);
        }
    }

    /** The first line of the innermost cause's message (its type when it has none). */
    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return m == null ? t.getClass().getSimpleName() : m.lines().findFirst().orElse(m);
    }
}
