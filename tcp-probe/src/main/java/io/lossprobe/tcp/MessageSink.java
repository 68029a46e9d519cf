package io.lossprobe.tcp;

/**
 * Where the framer hands each message it cut from the stream: in a run, the flow's
 * {@link io.lossprobe.core.accounting.FlowReceiver#onMessage}; in tests, a recorder.
 */
@FunctionalInterface
interface MessageSink {
    /** Same contract as {@code FlowReceiver.onMessage}: the six header words, the length, the arrival time. */
    void onMessage(long word0, long word1, long sequence, long sendTimeNs, long actualSendNs, long tag, int length,
                   long arrivalNs);
}
