package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Locale;

/**
 * Why a step's sender fell short of its schedule, with the figures the answer rests on (docs/measurement.md, "Why
 * the sender fell behind"). The sending thread's scheduler times are sampled on the engine's thread as the window
 * begins and when sending ends; the rest is counted by the send loop from what its writes answered and the clock it
 * reads once per cycle.
 *
 * @param reason          the answer; {@link Reason#NONE} when the sender kept to its schedule
 * @param behind          messages due in the window and never sent (the step's {@code behind})
 * @param refusedSends    messages the sending host refused (the step's {@code sendFailed})
 * @param windowNs        how long the figures below cover: from the window's start to the end of sending
 * @param runQueueWaitNs  time the sending thread was runnable but waited on a run queue for a CPU; null when it
 *                        could not be read ({@code /proc/self/task/TID/schedstat})
 * @param cpuNs           time the sending thread ran on a CPU; null when it could not be read
 * @param sendCallNs      time inside the send loop's cycles handing messages to the transport; null when the
 *                        sending side did not report it (an older server)
 * @param heldNs          time from each cycle in which the transport would not take a message to the next cycle;
 *                        null when not reported
 * @param blockedSends    writes the transport answered "not now" (a full send buffer, EAGAIN, back pressure); null
 *                        when not reported
 * @param handOffs        times the send loop handed a flow's due messages to the transport together, in the window;
 *                        null when not reported (files and servers from before it)
 * @param handOffMessages the messages those hand-offs carried ({@code handOffMessages / handOffs}: the mean burst
 *                        as it left; 1 for a constant schedule at low rates, N for {@code --pattern burst:N})
 * @param largestHandOff  the most messages one hand-off carried (at most the send loop's batch of 64)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SenderLimit(Reason reason, long behind, long refusedSends, long windowNs, Long runQueueWaitNs,
                          Long cpuNs, Long sendCallNs, Long heldNs, Long blockedSends, Long handOffs,
                          Long handOffMessages, Long largestHandOff) {
    /** A limit without hand-off figures (the shape of files before they existed). */
    public SenderLimit(Reason reason, long behind, long refusedSends, long windowNs, Long runQueueWaitNs,
                       Long cpuNs, Long sendCallNs, Long heldNs, Long blockedSends) {
        this(reason, behind, refusedSends, windowNs, runQueueWaitNs, cpuNs, sendCallNs, heldNs, blockedSends, null,
            null, null);
    }

    /** What held the sender back. */
    public enum Reason {
        /** It kept to its schedule. */
        @JsonProperty("none") NONE("kept to its schedule", ""),
        /** Its own host's stack would not take the messages: blocked or refused sends. */
        @JsonProperty("held-by-kernel") HELD_BY_KERNEL("held back by its own kernel", "kernel-held"),
        /** Its thread wanted a CPU and waited for one. */
        @JsonProperty("starved-of-cpu") STARVED_OF_CPU("starved of CPU", "starved"),
        /** Its thread ran all the time and still could not keep up. */
        @JsonProperty("at-cpu-limit") AT_CPU_LIMIT("at its own CPU limit", "cpu-limit"),
        /** None of the figures accounts for it (or they are missing). */
        @JsonProperty("unknown") UNKNOWN("for a reason the figures do not show", "behind-unexplained");

        private final String words;
        private final String flag;

        Reason(String words, String flag) {
            this.words = words;
            this.flag = flag;
        }

        /** The reason in words, as a step's warning says it. */
        public String words() {
            return words;
        }

        /** The reason as the run's table flags it (empty for {@link #NONE}). */
        public String flag() {
            return flag;
        }
    }

    /** Whether the sender fell short at all. */
    public boolean fellShort() {
        return reason != Reason.NONE;
    }

    /**
     * The step's warning, or null when nothing fell behind (refused messages alone are {@code sendFailed}, flagged
     * as such): "the sender fell behind by 1,234 messages: starved of CPU (its thread waited 412 ms on a run queue
     * in a 1.00 s window, and ran 80 ms)".
     */
    public String warning() {
        if (behind == 0 || !fellShort()) {
            return null;
        }
        return String.format(Locale.ROOT, "the sender fell behind by %,d messages: %s (%s)", behind, reason.words(),
            figures());
    }

    private String figures() {
        String window = String.format(Locale.ROOT, "%.2f s window", windowNs / 1e9);
        return switch (reason) {
            case HELD_BY_KERNEL -> blockedSends == null || blockedSends == 0
                ? String.format(Locale.ROOT, "%,d sends refused in a %s", refusedSends, window)
                : String.format(Locale.ROOT, "%,d sends blocked, holding it back %s of a %s; %,d refused",
                    blockedSends, ms(heldNs), window, refusedSends);
            case STARVED_OF_CPU -> runQueueWaitNs != null
                ? String.format(Locale.ROOT, "its thread waited %s on a run queue in a %s, and ran %s",
                    ms(runQueueWaitNs), window, ms(cpuNs))
                : String.format(Locale.ROOT, "its sends took %s of a %s, yet it was late: it was not running when "
                    + "its messages fell due", ms(sendCallNs), window);
            case AT_CPU_LIMIT -> cpuNs != null
                ? String.format(Locale.ROOT, "its thread ran %s of a %s and waited %s for a CPU", ms(cpuNs), window,
                    ms(runQueueWaitNs))
                : String.format(Locale.ROOT, "its send cycles took %s of a %s", ms(sendCallNs), window);
            default -> cpuNs != null
                ? String.format(Locale.ROOT, "its thread ran %s, waited %s for a CPU and was held %s by its kernel "
                    + "in a %s; it slept the rest (a pause outside lossprobe's view, such as the JVM's?)",
                    ms(cpuNs), ms(runQueueWaitNs), ms(heldNs), window)
                : "the sending thread's times could not be read";
        };
    }

    private static String ms(Long ns) {
        return ns == null ? "?" : String.format(Locale.ROOT, "%.0f ms", ns / 1e6);
    }
}
