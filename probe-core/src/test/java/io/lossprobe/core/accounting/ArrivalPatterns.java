package io.lossprobe.core.accounting;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * Arrival sequences as generated data, so that jqwik shrinks a failure to a short list of arrivals. A realistic
 * pattern starts from the sender's numbers 0..n-1 and applies network effects (drop a run, duplicate, reorder,
 * deliver very late), each effect a generated value; an adversarial pattern is arbitrary numbers with huge jumps.
 */
final class ArrivalPatterns {
    /**
     * Generated sequence numbers stay below this. From 2^63 - 64 up, the tracker's {@code base + windowBits}
     * overflows in finish() and received numbers are counted lost; no sender gets there, so it is not generated.
     */
    static final long MAX_SEQ = 1L << 62;

    private ArrivalPatterns() {
    }

    /**
     * One generated case: the tracker's window, the sender's wire end (sent plus failed), what arrived in which
     * order, and the (first, end) ranges the sender reported as failed (never sent), sorted.
     */
    record Case(int windowBits, long sent, List<Long> arrivals, String how, List<long[]> failed) {
        Case(int windowBits, long sent, List<Long> arrivals, String how) {
            this(windowBits, sent, arrivals, how, List.of());
        }

        /** The failed ranges as the sender's ledger holds them. */
        FailedRanges ledger() {
            FailedRanges out = new FailedRanges();
            for (long[] r : failed) {
                out.add(r[0], r[1] - r[0]);
            }
            return out;
        }

        boolean nothingBeyondSent() {
            return arrivals.stream().allMatch(seq -> seq < sent);
        }

        @Override
        public String toString() {
            // Periodic cases run to 100k arrivals; a shrunk counterexample is short and printed whole.
            String shown = arrivals.size() <= 400 ? arrivals.toString()
                : arrivals.subList(0, 400) + " ... (" + arrivals.size() + " in all)";
            StringBuilder f = new StringBuilder();
            for (long[] r : failed) {
                f.append(" [").append(r[0]).append(',').append(r[1]).append(')');
            }
            return "window=" + windowBits + " sent=" + sent + " " + how + (f.length() == 0 ? "" : " failed=" + f)
                + " arrivals=" + shown;
        }
    }

    /** A change the network makes to the arrival list. Positions are clamped to the list, so any value applies. */
    sealed interface Effect {
        void apply(List<Long> arrivals, int windowBits);
    }

    /** Loses {@code length} consecutive arrivals from position {@code at}. */
    record DropRun(int at, int length) implements Effect {
        @Override
        public void apply(List<Long> arrivals, int windowBits) {
            int from = Math.min(at, arrivals.size());
            arrivals.subList(from, Math.min(arrivals.size(), from + length)).clear();
        }
    }

    /** Delivers the arrival at {@code at} again, {@code delay} positions after the original. */
    record Duplicate(int at, int delay) implements Effect {
        @Override
        public void apply(List<Long> arrivals, int windowBits) {
            if (!arrivals.isEmpty()) {
                int from = Math.min(at, arrivals.size() - 1);
                arrivals.add(Math.min(arrivals.size(), from + 1 + delay), arrivals.get(from));
            }
        }
    }

    /** Moves the arrival at {@code at} later by {@code by} positions. */
    record Reorder(int at, int by) implements Effect {
        @Override
        public void apply(List<Long> arrivals, int windowBits) {
            moveLater(arrivals, at, by);
        }
    }

    /** Moves the arrival at {@code at} more than a window later, so that it usually arrives behind the window. */
    record VeryLate(int at, int beyondWindow) implements Effect {
        @Override
        public void apply(List<Long> arrivals, int windowBits) {
            moveLater(arrivals, at, windowBits + beyondWindow);
        }
    }

    private static void moveLater(List<Long> arrivals, int at, int by) {
        if (!arrivals.isEmpty()) {
            int from = Math.min(at, arrivals.size() - 1);
            long seq = arrivals.remove(from);
            arrivals.add(Math.min(arrivals.size(), from + by), seq);
        }
    }

    /** The sender skips {@code length} numbers after its {@code after}-th message: one huge loss run. */
    record Gap(int after, long length) {
    }

    /**
     * The sender's messages at positions {@code at .. at+length-1} were accepted, then failed to leave (reported
     * in the sender's ledger): they never arrive and must be neither received nor lost.
     */
    record SenderFailed(int at, int length) {
    }

    static Arbitrary<SenderFailed> senderFailures(int maxPosition) {
        return Combinators.combine(Arbitraries.integers().between(0, maxPosition),
            Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.integers().between(1, 8)),
                Tuple.of(1, Arbitraries.integers().between(1, 300)))).as(SenderFailed::new);
    }

    static Arbitrary<Integer> windows() {
        return Arbitraries.of(64, 128, 256, 512);
    }

    static Arbitrary<Effect> effects(int maxPosition) {
        Arbitrary<Integer> at = Arbitraries.integers().between(0, maxPosition);
        Arbitrary<Integer> small = Arbitraries.integers().between(1, 8);
        // Up to a few windows: runs that finalise whole words and cross the window edge.
        Arbitrary<Integer> upToFewWindows = Arbitraries.integers().between(1, 1500);
        Arbitrary<Integer> runLength = Arbitraries.frequencyOf(Tuple.of(4, small), Tuple.of(1, upToFewWindows));
        Arbitrary<Integer> displacement = Arbitraries.frequencyOf(Tuple.of(3, small), Tuple.of(2, upToFewWindows));
        return Arbitraries.oneOf(
            Combinators.combine(at, runLength).as(DropRun::new),
            Combinators.combine(at, displacement.map(d -> d - 1)).as(Duplicate::new),
            Combinators.combine(at, displacement).as(Reorder::new),
            Combinators.combine(at, Arbitraries.integers().between(0, 600)).as(VeryLate::new));
    }

    static Arbitrary<Gap> gaps(int maxPosition) {
        return Combinators.combine(Arbitraries.integers().between(0, maxPosition),
            Arbitraries.longs().between(1, MAX_SEQ / 4)).as(Gap::new);
    }

    /**
     * The sender's numbers 0..n-1 (with up to two huge skips), some of them failed at the sender, then up to 40
     * network effects.
     */
    static Arbitrary<Case> realistic(int maxSent) {
        Arbitrary<Integer> sent = Arbitraries.integers().between(0, maxSent);
        return Combinators.combine(windows(), sent, gaps(maxSent).list().ofMaxSize(2),
                senderFailures(maxSent).list().ofMaxSize(4), effects(maxSent).list().ofMaxSize(40))
            .as(ArrivalPatterns::realisticCase);
    }

    static Case realisticCase(int windowBits, int messages, List<Gap> gaps, List<Effect> effects) {
        return realisticCase(windowBits, messages, gaps, List.of(), effects);
    }

    static Case realisticCase(int windowBits, int messages, List<Gap> gaps, List<SenderFailed> senderFailed,
                              List<Effect> effects) {
        List<Long> arrivals = new ArrayList<>(messages + 8);
        long seq = 0;
        for (int i = 0; i < messages; i++) {
            for (Gap g : gaps) {
                if (g.after() == i) {
                    seq += g.length();
                }
            }
            arrivals.add(seq++);
        }
        for (Gap g : gaps) {
            if (g.after() >= messages) {
                seq += g.length(); // a skip after the last message is tail loss
            }
        }
        boolean[] failedAt = new boolean[messages];
        for (SenderFailed f : senderFailed) {
            for (int i = f.at(); i < Math.min(messages, f.at() + f.length()); i++) {
                failedAt[i] = true;
            }
        }
        List<long[]> failed = new ArrayList<>();
        List<Long> sentOnWire = new ArrayList<>(arrivals.size());
        for (int i = 0; i < messages; i++) {
            long n = arrivals.get(i);
            if (!failedAt[i]) {
                sentOnWire.add(n);
            } else if (!failed.isEmpty() && failed.get(failed.size() - 1)[1] == n) {
                failed.get(failed.size() - 1)[1] = n + 1;
            } else {
                failed.add(new long[] {n, n + 1});
            }
        }
        for (Effect e : effects) {
            e.apply(sentOnWire, windowBits);
        }
        String how = "gaps=" + gaps + (senderFailed.isEmpty() ? "" : " senderFailed=" + senderFailed)
            + " effects=" + effects;
        return new Case(windowBits, seq, sentOnWire, how, failed);
    }

    /**
     * Arbitrary numbers in [0, sent): an anchor plus offsets that are either small (so numbers collide and sit
     * in one window) or huge (jumps the tracker must take in O(1)), and a tail of unreported loss.
     */
    static Arbitrary<Case> adversarial() {
        Arbitrary<Long> anchor = Arbitraries.frequencyOf(
            Tuple.of(3, Arbitraries.just(0L)), Tuple.of(1, Arbitraries.longs().between(0, MAX_SEQ / 2)));
        Arbitrary<Long> offset = Arbitraries.frequencyOf(
            Tuple.of(4, Arbitraries.longs().between(0, 700)),
            Tuple.of(1, Arbitraries.longs().between(0, MAX_SEQ / 2)));
        Arbitrary<Long> tail = Arbitraries.frequencyOf(
            Tuple.of(3, Arbitraries.longs().between(0, 200)), Tuple.of(1, Arbitraries.longs().between(0, MAX_SEQ / 4)));
        return Combinators.combine(windows(), anchor, offset.list().ofMaxSize(120), tail)
            .as((windowBits, base, offsets, tailLength) -> {
                List<Long> arrivals = new ArrayList<>(offsets.size());
                long highest = base - 1;
                for (long o : offsets) {
                    arrivals.add(base + o);
                    highest = Math.max(highest, base + o);
                }
                return new Case(windowBits, highest + 1 + tailLength, arrivals, "adversarial");
            });
    }

    /**
     * Like {@link #adversarial()}, but the sender's count may be lower than what arrived (a count reported
     * short): the tracker then accounts up to the end of what its window has already finalised.
     */
    static Arbitrary<Case> beyondSent() {
        Arbitrary<Long> seq = Arbitraries.longs().between(0, 3000);
        return Combinators.combine(windows(), seq.list().ofMaxSize(120), Arbitraries.longs().between(0, 3000))
            .as((windowBits, arrivals, sent) -> new Case(windowBits, sent, arrivals, "beyondSent"));
    }

    /**
     * A pattern of {@code period} numbers, disturbed by effects, repeated until the stream is at least
     * {@code windowWraps} windows long: long streams from little generated data.
     */
    static Arbitrary<Case> periodic(int windowWraps) {
        Arbitrary<Integer> period = Arbitraries.integers().between(1, 300);
        // The smallest window: the most wraps for the fewest arrivals.
        return Combinators.combine(Arbitraries.just(64), period, effects(300).list().ofMaxSize(8))
            .as((windowBits, p, effects) -> {
                Case block = realisticCase(windowBits, p, List.of(), effects);
                long repeats = ((long) windowWraps * windowBits + p - 1) / p;
                List<Long> arrivals = new ArrayList<>((int) (repeats * block.arrivals().size()));
                for (long r = 0; r < repeats; r++) {
                    for (long seq : block.arrivals()) {
                        arrivals.add(r * p + seq);
                    }
                }
                return new Case(windowBits, repeats * p, arrivals,
                    "period=" + p + " x" + repeats + " effects=" + effects);
            });
    }
}
