package io.lossprobe.core.result;

/**
 * One size of a step's size mix ({@code --size-mix}): how many of the step's messages had it and what became of
 * them. Over a step's sizes, {@code sent}, {@code received} and {@code lost} add up to the step's counts, and for
 * each size {@code received + lost == sent}.
 *
 * @param size           the message size in bytes, header included
 * @param weight         its weight in the mix
 * @param sent           window messages of this size sent (handed over and not failed)
 * @param received       distinct ones received within the drain
 * @param lost           {@code sent - received}
 * @param lossPercent    {@code lost / sent}, in percent (0 when none was sent)
 * @param receivedBytes  {@code received * size}: the payload delivered
 * @param receivedMbps   {@code receivedBytes} over the window, in megabits per second (messages only, no headers
 *                       below them)
 */
public record SizeCounts(int size, int weight, long sent, long received, long lost, double lossPercent,
                         long receivedBytes, double receivedMbps) {
    /** The counts of one size over a window of {@code windowNs}. */
    public static SizeCounts of(int size, int weight, long sent, long received, long windowNs) {
        long lost = sent - received;
        double pct = sent == 0 ? 0 : Math.round(lost * 100.0 / sent * 10_000.0) / 10_000.0;
        long bytes = received * size;
        double mbps = windowNs <= 0 ? 0 : Math.round(bytes * 8.0 / (windowNs / 1e9) / 1e6 * 1000.0) / 1000.0;
        return new SizeCounts(size, weight, sent, received, lost, pct, bytes, mbps);
    }
}
