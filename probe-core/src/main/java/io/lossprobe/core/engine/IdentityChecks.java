package io.lossprobe.core.engine;

import io.lossprobe.core.result.Counts;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks of a step's counts that can fail (docs/measurement.md), flow by flow, turned into the step's warnings
 * in words. {@code lost} is defined as {@code sent - received}, so it cannot disagree with itself; these compare it
 * with what the receiver's tracker found independently.
 */
final class IdentityChecks {
    private static final int EXAMPLES = 3;
    private final List<String> examples = new ArrayList<>();
    private int brokenFlows;

    /** Checks one flow's counts. */
    void check(int flow, Counts counts) {
        note(flow, counts.brokenChecks());
    }

    /**
     * Echo mode: the replies' tracker must find exactly the requests that got no reply missing.
     *
     * @param requestsSent   requests on the wire (sent)
     * @param repliesLostInRuns what the replies' tracker finalised as missing
     */
    void checkReplies(int flow, long requestsSent, long repliesReceived, long repliesLostInRuns) {
        List<String> broken = new ArrayList<>();
        if (repliesLostInRuns != requestsSent - repliesReceived) {
            broken.add("replies: " + (requestsSent - repliesReceived) + " round trips lost but the replies' loss "
                + "runs hold " + repliesLostInRuns);
        }
        if (repliesReceived > requestsSent) {
            broken.add("replies: received " + repliesReceived + " of " + requestsSent + " requests sent");
        }
        note(flow, broken);
    }

    private void note(int flow, List<String> broken) {
        if (broken.isEmpty()) {
            return;
        }
        brokenFlows++;
        if (examples.size() < EXAMPLES) {
            examples.add("flow " + flow + ": " + String.join("; ", broken));
        }
    }

    /** One warning naming the broken checks, or none. */
    List<String> warnings() {
        if (brokenFlows == 0) {
            return List.of();
        }
        return List.of("accounting check failed on " + brokenFlows + " flow(s), the figures disagree with "
            + "themselves: " + String.join(" | ", examples) + (brokenFlows > EXAMPLES ? " | ..." : ""));
    }
}
