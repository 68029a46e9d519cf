package io.lossprobe.core.result;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One trial of a rate search, as one criterion judged it.
 *
 * @param trial               its number within the search, from 1
 * @param rate                the offered rate, messages/s over all flows (0: as fast as the sender goes)
 * @param windowNs            the trial's measured window
 * @param phase               {@code short} or {@code full} (full-length)
 * @param sent                messages put on the wire in the window
 * @param lost                of those, not received
 * @param sendFailed          refused by the sending host's stack or failed after being accepted
 * @param behind              never sent: the sender fell behind its schedule
 * @param lossRatio           lost / sent
 * @param achievedSendRate    sent / window, messages/s
 * @param achievedReceiveRate received / window, messages/s
 * @param senderLimited       the sender fell more than 1 % short of the rate (behind plus send failures): the path
 *                            was never offered it
 * @param verdict             {@code pass}, {@code fail} or {@code sender-limited} for this criterion
 * @param outlier             a failure the repeat right after it did not reproduce (taken for noise)
 * @param delayP50Ns          the trial's one-way delay p50 (absent when nothing arrived)
 * @param delayP99Ns          its p99
 * @param senderLimit         why the sender fell short of the trial's schedule, with the figures, as a step's
 *                            {@code senderLimit} (reason {@code none} when it kept to it); absent in older files
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SearchTrial(int trial, long rate, long windowNs, String phase, long sent, long lost, long sendFailed,
                          long behind, double lossRatio, double achievedSendRate, double achievedReceiveRate,
                          boolean senderLimited, String verdict, Boolean outlier, Long delayP50Ns, Long delayP99Ns,
                          SenderLimit senderLimit) {
    public static final String PASS = "pass";
    public static final String FAIL = "fail";
    public static final String SENDER_LIMITED = "sender-limited";
}
