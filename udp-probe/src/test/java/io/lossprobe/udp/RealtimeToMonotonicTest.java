package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link RealtimeToMonotonic} on a simulated host whose realtime clock is stepped: virtual monotonic time, datagrams
 * stamped on the realtime clock as they arrive, a reader that reads them later in batches, and a fake source of the
 * clock samples every read takes (true to within half their window, as the native piece's are). Every converted stamp
 * is never before the datagram's arrival (so never before its send), exact to the samples' windows unless the
 * converter counted it, and late by at most the step when it did. Each scenario also shows that the conversion with
 * the offset sampled at the read (what the native piece did before) gets it wrong by the step, uncounted.
 */
class RealtimeToMonotonicTest {
    private static final long US = 1_000;
    private static final long MS = 1_000_000;
    /** Realtime minus monotonic before any step: a wall clock in 2025 on a host booted a while ago. */
    private static final long BOOT_OFFSET_NS = 1_764_000_000_000_000_000L;
    /** The fake samples' windows: up to 140 ns, so each is within 70 ns of the truth. */
    private static final long MAX_WINDOW_NS = 140;
    /** How exact an uncounted conversion is: half the widest window, and the converter's rounding. */
    private static final long EXACT_NS = MAX_WINDOW_NS / 2 + 3;

    @Test
    void aForwardStepBetweenReadsWithDatagramsQueuedAcrossItLeavesEveryStampExact() {
        // 100k/s, the reader stalled from 1 to 3 ms and the clock stepped +2 ms at 2 ms: 200 datagrams queued across
        // the step, drained 16 a read over the following reads.
        SteppedHost host = new SteppedHost(1).step(2 * MS, 2 * MS);
        Outcome o = read(host, every(10 * US, 0, 6 * MS), readsEvery(50 * US, 4 * US, 0, 8 * MS, 1 * MS, 3 * MS), 16);
        assertHonest(o, EXACT_NS);
        assertThat(o.report.steps()).isEqualTo(1);
        assertThat(o.report.largestStepNs()).isBetween(2 * MS - EXACT_NS, 2 * MS + EXACT_NS);
        assertThat(o.report.doubtful()).as("the bracket (1 ms, 3 ms] is no longer than the step: no doubt").isZero();
        assertThat(o.naiveWorstEarlyNs()).as("the offset sampled at the read put stamps before their arrival")
            .isGreaterThan(2 * MS - EXACT_NS);
    }

    @Test
    void aBackwardStepBetweenReadsWithDatagramsQueuedAcrossItIsExactOrCountedAndNeverEarly() {
        SteppedHost host = new SteppedHost(2).step(2 * MS, -2 * MS);
        Outcome o = read(host, every(10 * US, 0, 6 * MS), readsEvery(50 * US, 4 * US, 0, 8 * MS, 1 * MS, 3 * MS), 16);
        assertHonest(o, 2 * MS + EXACT_NS);
        assertThat(o.report.steps()).isEqualTo(1);
        assertThat(o.report.largestStepNs()).isBetween(-2 * MS - EXACT_NS, -2 * MS + EXACT_NS);
        assertThat(o.report.doubtful()).as("datagrams that could be on either side").isPositive();
        assertThat(o.report.unexplained()).isZero();
        assertThat(o.naiveWorstLateUncountedNs()).as("the offset sampled at the read made stamps late, uncounted")
            .isGreaterThan(2 * MS - EXACT_NS);
    }

    @Test
    void aStepDuringAReadIsBracketedByThatReadsOwnSamples() {
        for (long step : new long[] {2 * MS, -2 * MS}) {
            // 1M/s, a read every 20 us: sample, recvmmsg 5 us later, sample 10 us after the first. The clock is
            // stepped 2.5 us into the read at 1 ms, between its first sample and its recvmmsg.
            SteppedHost host = new SteppedHost(3).step(1 * MS + 2500, step);
            Outcome o = read(host, every(1 * US, 0, 2 * MS), readsEvery(20 * US, 10 * US, 0, 3 * MS, 0, 0), 128);
            assertHonest(o, Math.abs(step) + EXACT_NS);
            assertThat(o.report.steps()).isEqualTo(1);
            assertThat(o.report.unexplained()).isZero();
            assertThat(o.naiveWorstEarlyNs() + o.naiveWorstLateUncountedNs())
                .as("the old conversion got the read's datagrams from before the step wrong").isGreaterThan(MS);
        }
    }

    @Test
    void aStepAndItsUndoingAcrossOneQueueAreEachBracketed() {
        // +2 ms at 1.5 ms and -2 ms at 2.5 ms while the reader is stalled 1 to 3 ms, a stall it drains 4 at a time:
        // some datagrams queued across both steps.
        SteppedHost host = new SteppedHost(4).step(1_500 * US, 2 * MS).step(2_500 * US, -2 * MS);
        List<Read> reads = readsEvery(50 * US, 4 * US, 0, 1 * MS, 0, 0);
        reads.add(new Read(2 * MS, 2 * MS + 2 * US, 2 * MS + 4 * US)); // one read in the middle of the stall
        reads.addAll(readsEvery(50 * US, 4 * US, 3 * MS, 20 * MS, 0, 0));
        Outcome o = read(host, every(10 * US, 0, 8 * MS), reads, 4);
        assertHonest(o, o.report.doubtBoundNs() + EXACT_NS);
        assertThat(o.report.steps()).isEqualTo(2);
        assertThat(o.report.doubtBoundNs()).as("late by at most the steps between two possible sides")
            .isLessThanOrEqualTo(4 * MS + 2 * EXACT_NS);
        assertThat(o.naiveWorstEarlyNs()).isGreaterThan(2 * MS - EXACT_NS);
    }

    @Test
    void anIdleReaderWokenByEachArrivalIsExactOrCountedAcrossEveryStep() {
        // 7 ms between datagrams; the reader waits in epoll_wait (its first sample), wakes 30 us after an arrival,
        // reads and samples again 2 us later. Each step comes 10 us after an arrival, before its read.
        SteppedHost host = new SteppedHost(5).step(22_010 * US, 2 * MS).step(50_010 * US, -2 * MS)
            .step(78_010 * US, 500 * US);
        long[] arrivals = every(7 * MS, 1 * MS, 100 * MS);
        List<Read> reads = new ArrayList<>();
        long last = 0;
        for (long a : arrivals) {
            reads.add(new Read(last + 1, a + 30 * US, a + 32 * US));
            last = a + 32 * US;
        }
        Outcome o = read(host, arrivals, reads, 128);
        assertHonest(o, 2 * MS + EXACT_NS);
        assertThat(o.report.steps()).isEqualTo(3);
        assertThat(o.report.largestStepNs()).isBetween(2 * MS - EXACT_NS, 2 * MS + EXACT_NS);
        assertThat(o.naiveWorstEarlyNs()).isGreaterThan(2 * MS - EXACT_NS);
        assertThat(o.naiveWorstLateUncountedNs()).isGreaterThan(2 * MS - EXACT_NS);
    }

    /**
     * Random hosts: bursts of arrivals, reads at random periods with stalls, batches of 1 to 128, up to three steps
     * of 50 us to 3 ms either way (at least one read apart), and a sample in twenty widened by preemption.
     */
    @Test
    void randomStepsArrivalsAndReadsNeverGiveAnEarlyStampOrAnUncountedWrongOne() {
        for (int seed = 0; seed < 300; seed++) {
            Random r = new Random(seed);
            SteppedHost host = new SteppedHost(seed).widenedNowAndThen(20 * US);
            int steps = r.nextInt(4);
            long at = 0;
            for (int s = 0; s < steps; s++) {
                at += 5 * MS + r.nextInt(10 * (int) MS);
                long size = (50 * US + r.nextInt(3 * (int) MS)) * (r.nextBoolean() ? 1 : -1);
                host.step(at, size);
            }
            long end = at + 10 * MS;
            List<Long> arrivals = new ArrayList<>();
            for (long t = r.nextInt(100 * (int) US); t < end; ) {
                arrivals.add(t);
                t += r.nextInt(10) == 0 ? r.nextInt(2 * (int) MS) : 1 + r.nextInt(20 * (int) US);
            }
            List<Read> reads = new ArrayList<>();
            for (long t = 0; t < end; ) {
                long readNs = 1 * US + r.nextInt(20 * (int) US);
                reads.add(new Read(t, t + readNs / 2, t + readNs));
                t += readNs + (r.nextInt(20) == 0 ? r.nextInt(4 * (int) MS) : r.nextInt(500 * (int) US));
            }
            int batch = new int[] {1, 4, 16, 128}[r.nextInt(4)];
            Outcome o = read(host, arrivals.stream().mapToLong(Long::longValue).toArray(), reads, batch);
            long tolerance = 10 * US + 3; // half the widest window
            assertHonest(o, o.report.doubtBoundNs() + tolerance, tolerance, "seed " + seed);
            assertThat(o.report.steps()).as("seed %d", seed).isEqualTo(steps);
            assertThat(o.report.unexplained()).as("seed %d", seed).isZero();
        }
    }

    @Test
    void samplesAgreeingWithinTheirWindowsAreNoStepAndTheTightestIsKept() {
        RealtimeToMonotonic clock = new RealtimeToMonotonic();
        clock.sample(BOOT_OFFSET_NS + 4_000, 10_000, 1 * MS); // a preempted sample: 4 us off, within its 5 us
        assertThat(clock.toMonotonic(BOOT_OFFSET_NS + MS / 2)).isEqualTo(MS / 2 - 4_000);
        clock.sample(BOOT_OFFSET_NS - 30, 80, 2 * MS);
        clock.sample(BOOT_OFFSET_NS + 3_000, 9_000, 3 * MS);
        assertThat(clock.toMonotonic(BOOT_OFFSET_NS + 2_500 * US)).as("the 80 ns sample's offset")
            .isEqualTo(2_500 * US + 30);
        clock.sample(BOOT_OFFSET_NS + 300, 80, 4 * MS);
        assertThat(clock.takeReport().steps()).as("300 ns apart with 80 ns windows: a step").isEqualTo(1);
        assertThat(clock.takeReport()).as("a report takes what came since the last")
            .isEqualTo(new RealtimeToMonotonic.Report(0, 0, 0, 0, 0));
    }

    @Test
    void aWideSampleThatAgreesDoesNotNarrowTheNextStepsBracket() {
        RealtimeToMonotonic clock = new RealtimeToMonotonic();
        clock.sample(BOOT_OFFSET_NS, 60, 1 * MS);
        // Stepped +0.5 ms at 1.5 ms; a sample at 2 ms was preempted (a 2 ms window) and cannot tell.
        clock.sample(BOOT_OFFSET_NS + 600 * US, 2 * MS, 2 * MS);
        clock.sample(BOOT_OFFSET_NS + 500 * US, 60, 3 * MS);
        assertThat(clock.takeReport().steps()).isEqualTo(1);
        // Arrived at 1.6 ms, after the step, read at 3 ms: either side fits the bracket (1 ms, 3 ms].
        assertThat(clock.toMonotonic(1_600 * US + BOOT_OFFSET_NS + 500 * US)).as("the later side")
            .isEqualTo(2_100 * US);
        assertThat(clock.doubtful()).as("counted, not taken for certain").isEqualTo(1);
    }

    @Test
    void aStampBeforeAnySampleIsGivenTheTimeItIsReadAndCounted() {
        RealtimeToMonotonic clock = new RealtimeToMonotonic();
        long before = System.nanoTime();
        assertThat(clock.toMonotonic(BOOT_OFFSET_NS)).isGreaterThanOrEqualTo(before);
        RealtimeToMonotonic.Report report = clock.takeReport();
        assertThat(report.doubtful()).isEqualTo(1);
        assertThat(report.unexplained()).isEqualTo(1);
    }

    @Test
    void aReadsSamplesAreTakenFromTheMetaBufferAndAMissingOneIsNone() {
        ByteBuffer meta = ByteBuffer.allocateDirect(NativeUdp.META_BUFFER_BYTES).order(ByteOrder.nativeOrder());
        putSample(meta, NativeUdp.META_SAMPLE_BEFORE, BOOT_OFFSET_NS, 60, 1 * MS);
        putSample(meta, NativeUdp.META_SAMPLE_AFTER, 0, -1, 0); // a read of nothing: no second sample
        RealtimeToMonotonic clock = new RealtimeToMonotonic();
        clock.readTaken(meta);
        putSample(meta, NativeUdp.META_SAMPLE_BEFORE, BOOT_OFFSET_NS, 60, 2 * MS);
        putSample(meta, NativeUdp.META_SAMPLE_AFTER, BOOT_OFFSET_NS + 2 * MS, 60, 3 * MS);
        clock.readTaken(meta);
        assertThat(clock.toMonotonic(BOOT_OFFSET_NS + 2 * MS + 2_500 * US)).as("read after the step")
            .isEqualTo(2_500 * US);
        assertThat(clock.toMonotonic(BOOT_OFFSET_NS + 2_500 * US)).as("stamped before it, queued across it")
            .isEqualTo(2_500 * US);
        RealtimeToMonotonic.Report report = clock.takeReport();
        assertThat(report.steps()).isEqualTo(1);
        assertThat(report.largestStepNs()).isEqualTo(2 * MS);
        assertThat(report.doubtful()).isZero();
    }

    @Test
    void whatAReaderSawBecomesTheStepsCountersAndAWarningInWords() {
        Map<String, Long> counters = new HashMap<>();
        List<String> notes = new ArrayList<>();
        UdpCounter.ClockSteps.RECEIVE.report(RealtimeToMonotonic.Report.NONE, counters, notes);
        assertThat(counters).as("nothing seen, nothing said").isEmpty();
        assertThat(notes).isEmpty();

        RealtimeToMonotonic.Report one = new RealtimeToMonotonic.Report(1, 489_000, 0, 0, 0);
        RealtimeToMonotonic.Report other = new RealtimeToMonotonic.Report(1, -2 * MS, 12, 0, 2 * MS);
        UdpCounter.ClockSteps.RECEIVE.report(one.and(other), counters, notes);
        assertThat(counters).containsExactlyInAnyOrderEntriesOf(Map.of("udp.clockSteps", 1L,
            "udp.clockStepStamps", 12L, "udp.clockStepMaxNs", -2 * MS));
        assertThat(notes).singleElement().asString().contains("CLOCK_REALTIME was stepped", "-2.000 ms",
            "12 stamp(s) could have been taken on either side", "delays may be long by up to 2.000 ms, never short");

        notes.clear();
        UdpCounter.ClockSteps.REPLIES.report(one, counters, notes);
        assertThat(counters).containsEntry("udp.replyClockSteps", 1L)
                .containsEntry("udp.replyClockStepMaxNs", 489_000L);
        assertThat(notes).singleElement().asString().contains("+0.489 ms", "no round trips are affected");
        assertThat(UdpCounter.ALL).extracting(d -> d.key()).contains("udp.clockSteps", "udp.clockStepStamps",
            "udp.clockStepMaxNs", "udp.replyClockSteps", "udp.replyClockStepStamps", "udp.replyClockStepMaxNs");
    }

    private static void putSample(ByteBuffer meta, int at, long offsetNs, long windowNs, long atNs) {
        meta.putLong(at + NativeUdp.SAMPLE_OFFSET_NS, offsetNs);
        meta.putLong(at + NativeUdp.SAMPLE_WINDOW_NS, windowNs);
        meta.putLong(at + NativeUdp.SAMPLE_AT_NS, atNs);
    }

    private static void assertHonest(Outcome o, long lateBoundNs) {
        assertHonest(o, lateBoundNs, EXACT_NS, "");
    }

    /**
     * Never before the arrival; exact to {@code exactNs} unless counted; counted ones late by at most
     * {@code lateBoundNs}, which the report states.
     */
    private static void assertHonest(Outcome o, long lateBoundNs, long exactNs, String what) {
        for (int i = 0; i < o.arrivals.length; i++) {
            long error = o.converted[i] - o.arrivals[i];
            assertThat(error).as("%s datagram %d (arrived at %d ns): not before its arrival", what, i, o.arrivals[i])
                .isGreaterThanOrEqualTo(-exactNs);
            if (o.counted[i]) {
                assertThat(error).as("%s datagram %d, counted: late by at most the bound", what, i)
                    .isLessThanOrEqualTo(lateBoundNs);
            } else {
                assertThat(error).as("%s datagram %d (arrived at %d ns), not counted: exact", what, i, o.arrivals[i])
                    .isLessThanOrEqualTo(exactNs);
            }
        }
        assertThat(o.report.doubtBoundNs()).as("%s the bound the report states", what)
            .isLessThanOrEqualTo(Math.max(0, lateBoundNs));
    }

    /** Arrivals every {@code gapNs} from {@code fromNs} to before {@code toNs}. */
    private static long[] every(long gapNs, long fromNs, long toNs) {
        long[] a = new long[(int) ((toNs - fromNs + gapNs - 1) / gapNs)];
        for (int i = 0; i < a.length; i++) {
            a[i] = fromNs + i * gapNs;
        }
        return a;
    }

    /** A read every {@code periodNs} lasting {@code readNs}, none starting in [stallFrom, stallTo). */
    private static List<Read> readsEvery(long periodNs, long readNs, long fromNs, long toNs, long stallFrom,
                                         long stallTo) {
        List<Read> reads = new ArrayList<>();
        for (long t = fromNs; t < toNs; t += periodNs) {
            if (t < stallFrom || t >= stallTo) {
                reads.add(new Read(t, t + readNs / 2, t + readNs));
            }
        }
        return reads;
    }

    /**
     * Reads the arrivals in order, as StampedReader does: each read samples before its wait, takes up to
     * {@code batch} of the datagrams arrived by its recvmmsg, and when it took any samples again and converts their
     * stamps. After {@code reads}, a read every 50 us until every datagram is read.
     */
    private static Outcome read(SteppedHost host, long[] arrivals, List<Read> reads, int batch) {
        RealtimeToMonotonic clock = new RealtimeToMonotonic();
        long[] converted = new long[arrivals.length];
        long[] naive = new long[arrivals.length];
        boolean[] counted = new boolean[arrivals.length];
        int next = 0;
        long lastNs = 0;
        for (int i = 0; next < arrivals.length; i++) {
            Read r = i < reads.size() ? reads.get(i) : new Read(lastNs + 50 * US, lastNs + 52 * US, lastNs + 54 * US);
            lastNs = r.afterNs;
            host.sample(clock, r.beforeNs);
            int n = 0;
            while (next + n < arrivals.length && arrivals[next + n] <= r.recvNs && n < batch) {
                n++;
            }
            if (n == 0) {
                continue;
            }
            host.sample(clock, r.afterNs);
            for (int k = next; k < next + n; k++) {
                long stamp = host.stamp(arrivals[k]);
                long doubtful = clock.doubtful();
                converted[k] = clock.toMonotonic(stamp);
                counted[k] = clock.doubtful() > doubtful;
                naive[k] = stamp - host.offsetAt(r.recvNs); // one offset taken at the read, for all its stamps
            }
            next += n;
        }
        return new Outcome(arrivals, converted, counted, naive, clock.takeReport());
    }

    /** One read: its first sample (before its wait), its recvmmsg, its last sample. */
    private record Read(long beforeNs, long recvNs, long afterNs) {
    }

    private record Outcome(long[] arrivals, long[] converted, boolean[] counted, long[] naive,
                           RealtimeToMonotonic.Report report) {
        /** How far before its arrival the old conversion put a datagram, at worst. */
        long naiveWorstEarlyNs() {
            long worst = 0;
            for (int i = 0; i < arrivals.length; i++) {
                worst = Math.max(worst, arrivals[i] - naive[i]);
            }
            return worst;
        }

        /** How late the old conversion put a datagram, at worst (it counted none). */
        long naiveWorstLateUncountedNs() {
            long worst = 0;
            for (int i = 0; i < arrivals.length; i++) {
                worst = Math.max(worst, naive[i] - arrivals[i]);
            }
            return worst;
        }
    }

    /**
     * A host's realtime clock as its offset from the monotonic one, stepped at given monotonic times, and the clock
     * samples its reads take: each within half its window of the true offset at that moment.
     */
    private static final class SteppedHost {
        private final TreeMap<Long, Long> offsetFrom = new TreeMap<>();
        private final Random random;
        private long widenedNs;

        SteppedHost(long seed) {
            offsetFrom.put(Long.MIN_VALUE, BOOT_OFFSET_NS);
            random = new Random(seed);
        }

        /** The realtime clock stepped by {@code byNs} at monotonic {@code atNs} (steps in time order). */
        SteppedHost step(long atNs, long byNs) {
            offsetFrom.put(atNs, offsetAt(atNs) + byNs);
            return this;
        }

        /** One sample in twenty (never the first) taken by a preempted thread: a window up to {@code ns}. */
        SteppedHost widenedNowAndThen(long ns) {
            widenedNs = ns;
            return this;
        }

        long offsetAt(long ns) {
            return offsetFrom.floorEntry(ns).getValue();
        }

        /** The kernel's stamp of a datagram arriving at monotonic {@code ns}: CLOCK_REALTIME then. */
        long stamp(long ns) {
            return ns + offsetAt(ns);
        }

        void sample(RealtimeToMonotonic clock, long atNs) {
            boolean widened = widenedNs > 0 && atNs > 0 && random.nextInt(20) == 0;
            long window = widened ? random.nextLong(widenedNs + 1) : 20 + random.nextInt((int) MAX_WINDOW_NS - 19);
            long error = random.nextLong(window + 1) - window / 2; // within [-window/2, window/2]
            clock.sample(offsetAt(atNs) + Math.max(-window / 2, Math.min(window / 2, error)), window, atNs);
        }
    }
}
