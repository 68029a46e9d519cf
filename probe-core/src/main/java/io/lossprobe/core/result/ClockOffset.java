package io.lossprobe.core.result;

/**
 * The server's clock relative to the controller's, both {@code System.nanoTime()}: {@code server = client +
 * offsetNs}, true to within {@code +- uncertaintyNs}. The offset is a 64-bit value with wrap-around
 * ({@code nanoTime} origins are arbitrary per host), so use it only through subtraction, as the methods here do.
 *
 * @param offsetNs      server clock minus client clock (wrapping)
 * @param uncertaintyNs the true offset lies within {@code offsetNs +- uncertaintyNs}: half the best exchange's delay
 * @param rttNs         the best exchange's round trip on the client's clock, server hold time included
 * @param exchanges     exchanges the estimate chose from
 */
public record ClockOffset(long offsetNs, long uncertaintyNs, long rttNs, int exchanges) {
    /** One-way delay of a message sent at {@code sentClientNs} (client clock), arrived at {@code arrivedServerNs}. */
    public long clientToServerNs(long sentClientNs, long arrivedServerNs) {
        return (arrivedServerNs - sentClientNs) - offsetNs;
    }

    /** One-way delay of a message sent at {@code sentServerNs} (server clock), arrived at {@code arrivedClientNs}. */
    public long serverToClientNs(long sentServerNs, long arrivedClientNs) {
        return (arrivedClientNs - sentServerNs) + offsetNs;
    }

    /** How far the offset moved from {@code earlier} to this estimate (the clocks' relative drift), wrap-safe. */
    public long driftSinceNs(ClockOffset earlier) {
        return offsetNs - earlier.offsetNs;
    }
}
