package io.lossprobe.core.accounting;

/**
 * Test-only fault injection in the send path. A message the filter {@link #drop drops} is counted as sent (it takes
 * a wire sequence) and never handed to the transport, so the receiver must report exactly that loss. A message it
 * {@link #refuse refuses} is counted as the local stack refusing it ({@code sendFailed}) and takes no wire
 * sequence, so the receiver must see no loss at all.
 */
@FunctionalInterface
public interface SendFilter {
    SendFilter NONE = (flow, sequence) -> false;

    /** @param sequence the wire sequence the message would carry */
    boolean drop(int flow, long sequence);

    /** @param scheduleIndex the message's place in the flow's schedule (wire sequences stay dense) */
    default boolean refuse(int flow, long scheduleIndex) {
        return false;
    }

    /** A filter that only refuses, as {@code refused} says. */
    static SendFilter refusing(java.util.function.BiPredicate<Integer, Long> refused) {
        return new SendFilter() {
            @Override
            public boolean drop(int flow, long sequence) {
                return false;
            }

            @Override
            public boolean refuse(int flow, long scheduleIndex) {
                return refused.test(flow, scheduleIndex);
            }
        };
    }
}
