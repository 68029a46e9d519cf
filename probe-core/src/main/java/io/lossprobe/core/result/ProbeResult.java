package io.lossprobe.core.result;

/**
 * {@code run --probe echo[:RATE]}: what a low-rate echo flow measured while the step's stream ran beside it, on a
 * port of its own with accounting of its own: the round trip under the step's load.
 *
 * @param mode          {@code echo}
 * @param ratePerSecond the probe's request rate
 * @param port          the probe flow's port
 * @param messageSize   the probe's message size, header included
 * @param echo          the probe's requests, replies and round trip ({@link Echo#identitiesHold()} holds)
 * @param behind        requests the probe's sender could not send in its window (it was off the CPU as the window
 *                      ended): not lost, never sent; 0 when it kept up (and in files written before it existed)
 */
public record ProbeResult(String mode, long ratePerSecond, int port, int messageSize, Echo echo, long behind) {
    public static final String ECHO = "echo";
}
