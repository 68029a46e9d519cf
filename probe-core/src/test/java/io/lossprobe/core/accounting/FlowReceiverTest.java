package io.lossprobe.core.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.wire.MessageAuth;
import io.lossprobe.core.wire.MessageHeader;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FlowReceiverTest {
    private static final int RUN = 99;
    private static final int FLOW = 3;
    private static final int SIZE = 64;
    private static final MessageAuth KEY = new MessageAuth(0x5eed, 0xf00d);
    private FlowReceiver flow;

    @BeforeEach
    void begin() {
        flow = new FlowReceiver(FLOW, RUN, SIZE, 4, false, KEY);
        flow.beginStep(1, 4096);
    }

    /** A message as this run's sender sends it: tagged under the run's key. */
    private boolean send(long w0, long w1, long seq, long sendNs, int length, long arrivalNs) {
        return flow.onMessage(w0, w1, seq, sendNs, sendNs, KEY.tag(w0, w1, seq, sendNs, sendNs), length, arrivalNs);
    }

    private void data(int step, long seq, long sendNs, long arrivalNs) {
        send(MessageHeader.word0(MessageHeader.KIND_DATA, FLOW), MessageHeader.word1(RUN, step, SIZE), seq, sendNs,
            SIZE, arrivalNs);
    }

    @Test
    void headersThatFailValidationAreCorruptNeverReceived() {
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, FLOW);
        long w1 = MessageHeader.word1(RUN, 1, SIZE);
        send(w0 ^ (1L << 40), w1, 0, 0, SIZE, 10);                                         // bad magic
        send(w0, MessageHeader.word1(RUN + 1, 1, SIZE), 0, 0, SIZE, 10);                   // other run
        send(MessageHeader.word0(MessageHeader.KIND_DATA, FLOW + 1), w1, 0, 0, SIZE, 10);  // other flow
        send(w0, MessageHeader.word1(RUN, 1, SIZE + 1), 0, 0, SIZE, 10);                   // header length differs
        send(w0, w1, 0, 0, SIZE - 1, 10);                                                  // truncated datagram
        flow.onMessage(0, 0, 0, 0, 0, 0, 12, 10);                                          // too short for a header
        send(MessageHeader.word0(9, FLOW), w1, 0, 0, SIZE, 10);                            // unknown kind
        send(w0, w1, -1, 0, SIZE, 10);                                                     // negative sequence
        FlowReceiver.Summary s = flow.closeStep(1);
        assertThat(s.corrupt()).isEqualTo(8);
        assertThat(s.received()).isZero();
    }

    /**
     * With a size mix (64:1,100:1; flow 3's message s is 64 bytes when s + 3 is even), every message must have the
     * length its sequence number has: a verified message of the other size, or whose header and datagram disagree,
     * is corrupt; the good ones count per size.
     */
    @Test
    void aSizeMixsMessagesMustHaveTheirSequencesLengthAndCountPerSize() {
        flow = new FlowReceiver(FLOW, RUN, 100, 4, false, KEY);
        flow.sizeMix(io.lossprobe.core.plan.SizeMix.parse("64:1,100:1"));
        flow.beginStep(1, 4096);
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, FLOW);
        long w64 = MessageHeader.word1(RUN, 1, 64);
        long w100 = MessageHeader.word1(RUN, 1, 100);
        assertThat(send(w0, w100, 0, 0, 100, 10)).isTrue();  // 0 + 3 odd: 100 bytes
        assertThat(send(w0, w64, 1, 0, 64, 10)).isTrue();    // 1 + 3 even: 64 bytes
        assertThat(send(w0, w64, 2, 0, 64, 10)).isFalse();   // should be 100: corrupt
        assertThat(send(w0, w100, 3, 0, 64, 10)).isFalse();  // header says 100, 64 delivered: corrupt
        assertThat(send(w0, MessageHeader.word1(RUN, 1, 200), 5, 0, 200, 10)).isFalse(); // past the largest
        assertThat(send(w0, w100, 4, 0, 100, 10)).isTrue();
        FlowReceiver.Summary s = flow.closeStep(5);
        assertThat(s.corrupt()).isEqualTo(3);
        assertThat(s.received()).isEqualTo(3);
        assertThat(s.receivedBySize()).containsExactly(1, 2);
        FlowReceiver plain = new FlowReceiver(FLOW, RUN, 64, 4, false, KEY);
        plain.beginStep(1, 4096);
        assertThat(plain.closeStep(0).receivedBySize()).as("no mix: no split").isNull();
    }

    @Test
    void warmUpIsIgnoredAndDataIsCountedWithItsDelay() {
        send(MessageHeader.word0(MessageHeader.KIND_WARMUP, FLOW), MessageHeader.word1(RUN, 1, SIZE), 0, 0, SIZE, 5);
        data(1, 0, 1_000, 51_000);
        data(1, 1, 2_000, 62_000);
        data(1, 1, 2_000, 63_000);
        FlowReceiver.Summary s = flow.closeStep(3);
        assertThat(s.warmup()).isEqualTo(1);
        assertThat(s.received()).isEqualTo(2);
        assertThat(s.duplicates()).isEqualTo(1);
        assertThat(s.lostInRuns()).isEqualTo(1);
        assertThat(s.delay().count()).isEqualTo(2);
        assertThat(s.delay().min()).isBetween(49_500L, 50_500L);
        assertThat(s.ipdv().getTotalCount()).isEqualTo(1);
        assertThat(s.jitterNs()).isEqualTo(10_000 / 16.0);
    }

    @Test
    void arrivalsAfterTheStepClosedAreLateForThatStep() {
        data(1, 0, 0, 10);
        flow.closeStep(2);
        data(1, 1, 0, 20);
        assertThat(flow.lateAfterClose(1)).isEqualTo(1);
        flow.beginStep(2, 4096);
        data(1, 1, 0, 30);   // step 1's straggler's copy during step 2: a late duplicate for step 1
        data(1, 5, 0, 30);   // beyond what the sender put on the wire in step 1 (2): not a message of it
        data(3, 0, 0, 30);   // a step not begun yet: not part of this schedule
        assertThat(flow.lateAfterClose(1)).isEqualTo(1);
        assertThat(flow.lateDuplicatesAfterClose(1)).isEqualTo(1);
        FlowReceiver.Summary s = flow.closeStep(0);
        assertThat(s.corrupt()).isEqualTo(2);
        assertThat(s.received()).isZero();
    }

    /**
     * A message of a step closed more than {@link FlowReceiver#CLOSED_STEPS_KEPT} steps ago (a replay: no network
     * holds a datagram that long) is foreign, not late: it cannot fill that step's loss.
     */
    @Test
    void aReplayOfAStepClosedLongAgoIsForeignNotLate() {
        FlowReceiver many = new FlowReceiver(FLOW, RUN, SIZE, FlowReceiver.CLOSED_STEPS_KEPT + 3, false, KEY);
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, FLOW);
        many.beginStep(0, 4096);
        long tag = KEY.tag(w0, MessageHeader.word1(RUN, 0, SIZE), 1, 0, 0);
        many.closeStep(2); // sequence 1 of step 0 was lost
        for (int step = 1; step <= FlowReceiver.CLOSED_STEPS_KEPT + 1; step++) {
            many.beginStep(step, 4096);
            if (step <= FlowReceiver.CLOSED_STEPS_KEPT) {
                many.closeStep(0);
            }
        }
        many.onMessage(w0, MessageHeader.word1(RUN, 0, SIZE), 1, 0, 0, tag, SIZE, 50);
        assertThat(many.lateAfterClose(0)).as("late for step 0").isZero();
        FlowReceiver.Summary s = many.closeStep(0);
        assertThat(s.foreign()).isEqualTo(1);
    }

    /**
     * Between hosts every delay is corrected by the clock offset (receiver minus sender): a sender whose clock is
     * an hour ahead still gives one-way delays, and one below zero (the estimate's uncertainty) is kept, not
     * clamped. The warm-up's smallest delay is the flow's baseline, with its sample count.
     */
    @Test
    void betweenHostsDelaysAreCorrectedByTheClockOffsetAndNeverClamped() {
        long hour = 3_600_000_000_000L;
        long offset = -hour; // the sender's clock reads an hour more than ours
        flow.beginStep(2, 4096, null, offset);
        long w0 = MessageHeader.word0(MessageHeader.KIND_WARMUP, FLOW);
        long w1 = MessageHeader.word1(RUN, 2, SIZE);
        for (int k = 0; k < 3; k++) {
            send(w0, w1, k, hour + 1_000 * k, SIZE, 1_000 * k + 80_000 + 10_000 * k); // 80, 90, 100 us
        }
        data(2, 0, hour + 5_000_000, 5_000_000 + 120_000);   // 120 us
        data(2, 1, hour + 6_000_000, 6_000_000 - 20_000);    // -20 us: within an estimate's uncertainty
        FlowReceiver.Summary s = flow.closeStep(2);
        assertThat(s.warmupDelays()).isEqualTo(3);
        assertThat(s.warmupMinDelayNs()).isEqualTo(80_000);
        assertThat(s.delay().count()).isEqualTo(2);
        assertThat(s.delay().min()).isBetween(-20_200L, -19_800L);
        assertThat(s.delay().max()).isBetween(119_000L, 121_000L);
        assertThat(s.delay().belowCount()).isEqualTo(1);
    }

    /**
     * Anyone who has seen one datagram knows the run id; without the run's key they still cannot make a message
     * that counts. A forged one with a huge sequence does not slide the window (it used to make a clean flow
     * report 4,182 of 6,000 lost), a forged warm-up does not move the baseline, a replayed message with one word
     * changed fails its tag: all foreign, never received, never answered.
     */
    @Test
    void messagesWithoutTheRunsTagAreForeignAndMoveNothing() {
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, FLOW);
        long w1 = MessageHeader.word1(RUN, 1, SIZE);
        data(1, 0, 1_000, 51_000);
        assertThat(flow.onMessage(w0, w1, 1L << 62, 2_000, 2_000, 12345, SIZE, 52_000)).isFalse(); // forged
        long genuine = KEY.tag(w0, w1, 1, 2_000, 2_000);
        assertThat(flow.onMessage(w0, w1, 1L << 62, 2_000, 2_000, genuine, SIZE, 52_000)).isFalse(); // modified
        long warm = MessageHeader.word0(MessageHeader.KIND_WARMUP, FLOW);
        flow.onMessage(warm, w1, 0, 0, 0, 0, SIZE, 99_000_000); // a forged warm-up, 99 ms "delay"
        MessageAuth otherRun = new MessageAuth(0x5eed, 0xf00e);
        flow.onMessage(w0, w1, 2, 3_000, 3_000, otherRun.tag(w0, w1, 2, 3_000, 3_000), SIZE, 53_000);
        data(1, 1, 2_000, 52_000);
        FlowReceiver.Summary s = flow.closeStep(2);
        assertThat(s.foreign()).isEqualTo(4);
        assertThat(s.received()).isEqualTo(2);
        assertThat(s.lostInRuns()).isZero();
        assertThat(s.warmup()).isZero();
        assertThat(s.warmupDelays()).isZero();
        assertThat(s.corrupt()).isZero();
    }

    /** Transit leaves the sender's lag out: the actual send time, not the intended one, is its start. */
    /**
     * A datagram with a header that parses as this flow's but arrives short (or long), or with a negative sequence,
     * is corrupt only when its tag proves our sender sent it: spoofed ones were counted corrupt before the tag was
     * looked at, so a forger could make a clean path look like one that damages packets.
     */
    @Test
    void aShortOrOddMessageIsCorruptOnlyWhenItsTagIsOurs() {
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, FLOW);
        long w1 = MessageHeader.word1(RUN, 1, SIZE);
        flow.onMessage(w0, w1, 5, 1_000, 1_000, 0xbad, SIZE - 1, 2_000);           // spoofed, short
        flow.onMessage(w0, w1, 5, 1_000, 1_000, 0xbad, MessageHeader.LENGTH, 2_000); // spoofed, header only
        flow.onMessage(w0, w1, 5, 1_000, 1_000, 0xbad, SIZE + 9, 2_000);           // spoofed, padded
        flow.onMessage(w0, w1, -7, 1_000, 1_000, 0xbad, SIZE, 2_000);              // spoofed, negative sequence
        send(w0, w1, 6, 1_000, SIZE - 1, 2_000);                                    // ours, truncated
        send(w0, w1, -7, 1_000, SIZE, 2_000);                                       // ours (a sender bug), negative
        FlowReceiver.Summary s = flow.closeStep(1);
        assertThat(s.foreign()).isEqualTo(4);
        assertThat(s.corrupt()).isEqualTo(2);
        assertThat(s.received()).isZero();
    }

    @Test
    void transitIsFromTheActualSendTimeAndDelayFromTheIntendedOne() {
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, FLOW);
        long w1 = MessageHeader.word1(RUN, 1, SIZE);
        long intended = 1_000_000;
        long actual = intended + 400_000;      // handed over 400 us late
        long arrival = actual + 50_000;        // 50 us on the way
        flow.onMessage(w0, w1, 0, intended, actual, KEY.tag(w0, w1, 0, intended, actual), SIZE, arrival);
        FlowReceiver.Summary s = flow.closeStep(1);
        assertThat(s.delay().max()).isBetween(445_000L, 455_000L);
        assertThat(s.transit().max()).isBetween(49_500L, 50_500L);
    }

    @Test
    void progressIsVisibleFromOtherThreads() {
        data(1, 0, 0, 1);
        data(1, 1, 0, 1);
        assertThat(flow.progress()).isEqualTo(2);
    }

    @Test
    void theResponderAnswersItsStepsWarmUpSoTheReplyPathRunsBeforeTheWindow() {
        long warm = MessageHeader.word0(MessageHeader.KIND_WARMUP, FLOW);
        assertThat(send(warm, MessageHeader.word1(RUN, 1, SIZE), 0, 0, SIZE, 5)).as("open step's warm-up").isTrue();
        assertThat(send(warm, MessageHeader.word1(RUN, 0, SIZE), 0, 0, SIZE, 5)).as("another step's").isFalse();
        FlowReceiver.Summary s = flow.closeStep(0);
        assertThat(s.warmup()).isEqualTo(2);
        assertThat(s.received()).isZero();

        // The requester takes a warm-up reply as a warm-up: accepted, ignored, never answered.
        FlowReceiver requester = new FlowReceiver(FLOW, RUN, SIZE, 4, true, KEY);
        requester.beginStep(1, 4096);
        long w1 = MessageHeader.word1(RUN, 1, SIZE);
        assertThat(requester.onMessage(warm, w1, 0, 0, 0, KEY.tag(warm, w1, 0, 0, 0), SIZE, 5)).isFalse();
        FlowReceiver.Summary r = requester.closeStep(0);
        assertThat(r.warmup()).isEqualTo(1);
        assertThat(r.received()).isZero();
        assertThat(r.corrupt()).isZero();
    }

    @Test
    void eachFigureCountsTheArrivalsTheKernelStamped() {
        long w0 = MessageHeader.word0(MessageHeader.KIND_DATA, FLOW);
        long w1 = MessageHeader.word1(RUN, 1, SIZE);
        for (long seq = 0; seq < 4; seq++) {
            long sendNs = seq * 1_000;
            flow.onMessage(w0, w1, seq, sendNs, sendNs, KEY.tag(w0, w1, seq, sendNs, sendNs), SIZE, sendNs + 500,
                seq != 2);
        }
        flow.onMessage(w0, w1, 3, 3_000, 3_000, KEY.tag(w0, w1, 3, 3_000, 3_000), SIZE, 9_999, true); // duplicate
        FlowReceiver.Summary s = flow.closeStep(4);
        assertThat(s.kernelStamped()).as("first arrivals only, as the delays").isEqualTo(3);
        assertThat(s.timestampSource()).isEqualTo("mixed");

        flow.beginStep(2, 4096);
        long w1b = MessageHeader.word1(RUN, 2, SIZE);
        flow.onMessage(w0, w1b, 0, 0, 0, KEY.tag(w0, w1b, 0, 0, 0), SIZE, 700, true);
        assertThat(flow.closeStep(1).timestampSource()).isEqualTo("kernel");
        flow.beginStep(3, 4096);
        assertThat(flow.closeStep(0).timestampSource()).as("no arrivals, no source").isNull();
    }
}
