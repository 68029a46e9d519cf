package io.lossprobe.core.transport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Exceptions an endpoint's event loops caught (a Netty handler's {@code exceptionCaught}, an agent's error
 * handler), per flow: counted, the last kept in words, and surfaced once per step as notes that become the step's
 * warnings. Nothing is printed: a stack trace on the terminal helps no one read a run, a note in its results does.
 *
 * <p>{@link #record} may be called from any thread and costs nothing until something fails; {@link #beginStep} and
 * {@link #notes} are for the engine's thread.
 */
public final class LoopErrors {
    /** Flows named in one step's notes; the rest are summed in one more. */
    static final int MAX_FLOWS_NOTED = 4;

    private final String kind;
    private final String[] flowNames;
    private final AtomicLongArray counts;
    private final AtomicReferenceArray<String> last;
    private final long[] atStepStart;

    /**
     * @param kind      what failed, as the note says it: "send", "receive", "accept"
     * @param flowNames per flow, how a note names it: "udp flow 3 (port 40003)", or one name for a thread
     */
    public LoopErrors(String kind, String... flowNames) {
        this.kind = kind;
        this.flowNames = flowNames.clone();
        this.counts = new AtomicLongArray(flowNames.length);
        this.last = new AtomicReferenceArray<>(flowNames.length);
        this.atStepStart = new long[flowNames.length];
    }

    /** Names flow i "{@code transport} flow i (port {@code basePort + i})". */
    public static LoopErrors perFlow(String kind, String transport, int basePort, int flows) {
        String[] names = new String[flows];
        for (int i = 0; i < flows; i++) {
            names[i] = transport + " flow " + i + " (port " + (basePort + i) + ")";
        }
        return new LoopErrors(kind, names);
    }

    /** Counts {@code cause} against {@code flow} and keeps its message. */
    public void record(int flow, Throwable cause) {
        last.set(flow, describe(cause));
        counts.incrementAndGet(flow);
    }

    /** Starts the step's count. */
    public void beginStep() {
        for (int i = 0; i < atStepStart.length; i++) {
            atStepStart[i] = counts.get(i);
        }
    }

    /** Errors since {@link #beginStep}, over all flows. */
    public long sinceStepStart() {
        long n = 0;
        for (int i = 0; i < atStepStart.length; i++) {
            n += counts.get(i) - atStepStart[i];
        }
        return n;
    }

    /**
     * The step's errors in words, one note per flow that had any ("udp flow 3 (port 40003): 2 send error(s), the
     * last: Connection refused"), at most {@value #MAX_FLOWS_NOTED} and one for the rest; empty when none.
     */
    public List<String> notes() {
        List<String> notes = new ArrayList<>();
        long moreErrors = 0;
        int moreFlows = 0;
        for (int i = 0; i < atStepStart.length; i++) {
            long n = counts.get(i) - atStepStart[i];
            if (n == 0) {
                continue;
            }
            if (notes.size() < MAX_FLOWS_NOTED) {
                notes.add(flowNames[i] + ": " + n + " " + kind + " error(s), the last: " + last.get(i));
            } else {
                moreErrors += n;
                moreFlows++;
            }
        }
        if (moreFlows > 0) {
            notes.add(moreFlows + " more flow(s): " + moreErrors + " " + kind + " error(s)");
        }
        return notes;
    }

    /** A throwable in one line: its message, else its type. */
    public static String describe(Throwable cause) {
        String message = cause.getMessage();
        String line = message == null || message.isBlank() ? cause.getClass().getSimpleName() : message;
        int newline = line.indexOf('\n');
        return newline < 0 ? line : line.substring(0, newline);
    }
}
