package io.lossprobe.core.plan;

import io.lossprobe.core.wire.MessageHeader;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A mix of message sizes within every step ({@code --size-mix}): sizes with whole-number weights, such as IMIX's
 * {@code 64:7,570:4,1518:1}. Which size a message has is a pure function of its flow and wire sequence number, so
 * the sender and the receiver agree on it without a word: the sizes are laid out over a cycle of {@link #period()}
 * sequence numbers (the sum of the weights), each size as evenly spread over the cycle as its weight allows (largest
 * remainder first, so IMIX's 1518 is not next to another), and flow {@code f} starts its cycle {@code f} places in,
 * so the flows' large messages do not fall due together. A receiver checks every message's length against its
 * sequence number: a message of the wrong length for its place is corrupt.
 *
 * <p>Counts per size are exact: each sequence number has one size, so a step's sent, received and lost split by
 * size add up to the step's.
 *
 * @param sizes   the distinct sizes in bytes (header included), in the order given
 * @param weights each size's weight, at least 1
 */
public record SizeMix(List<Integer> sizes, List<Integer> weights) {
    /** The IMIX of TRex and FD.io CSIT: 7 x 64 B, 4 x 570 B, 1 x 1518 B (Ethernet frame sizes, here message sizes). */
    public static final String IMIX = "64:7,570:4,1518:1";
    /** The longest cycle: the weights add up to at most this. */
    public static final int MAX_PERIOD = 10_000;
    /** The most sizes one mix has. */
    public static final int MAX_SIZES = 64;

    public SizeMix {
        sizes = List.copyOf(sizes);
        weights = List.copyOf(weights);
        if (sizes.isEmpty() || sizes.size() != weights.size()) {
            throw new IllegalArgumentException("--size-mix needs SIZE:WEIGHT pairs");
        }
        if (sizes.size() > MAX_SIZES) {
            throw new IllegalArgumentException("--size-mix has " + sizes.size() + " sizes; at most " + MAX_SIZES);
        }
        long period = 0;
        for (int i = 0; i < sizes.size(); i++) {
            int size = sizes.get(i);
            if (size < MessageHeader.LENGTH) {
                throw new IllegalArgumentException("--size-mix size " + size + " is below the " + MessageHeader.LENGTH
                    + "-byte header");
            }
            if (size > Plan.MAX_UDP_PAYLOAD) {
                throw new IllegalArgumentException("--size-mix size " + size + " is above the largest UDP payload ("
                    + Plan.MAX_UDP_PAYLOAD + ")");
            }
            if (sizes.indexOf(size) != i) {
                throw new IllegalArgumentException("--size-mix names size " + size + " twice");
            }
            if (weights.get(i) < 1) {
                throw new IllegalArgumentException("--size-mix weight of size " + size + " must be at least 1");
            }
            period += weights.get(i);
        }
        if (sizes.size() < 2) {
            throw new IllegalArgumentException("--size-mix needs at least two sizes (one size is --size)");
        }
        if (period > MAX_PERIOD) {
            throw new IllegalArgumentException("--size-mix weights add up to " + period + "; at most " + MAX_PERIOD);
        }
    }

    /**
     * Reads {@code imix} or {@code SIZE:WEIGHT,...} (sizes as {@code --size} takes them: {@code 1518}, {@code 1KiB});
     * null or blank is no mix (null).
     */
    public static SizeMix parse(String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        String spec = text.trim().equalsIgnoreCase("imix") ? IMIX : text.trim();
        List<Integer> sizes = new ArrayList<>();
        List<Integer> weights = new ArrayList<>();
        for (String part : spec.split(",", -1)) {
            String[] sw = part.trim().split(":", -1);
            if (sw.length != 2 || sw[0].isBlank() || sw[1].isBlank()) {
                throw new IllegalArgumentException("--size-mix '" + text + "': each part is SIZE:WEIGHT (e.g. "
                    + IMIX + "), or imix");
            }
            long size = Units.parseBytes(sw[0].trim(), "--size-mix size");
            int weight;
            try {
                weight = Integer.parseInt(sw[1].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--size-mix '" + text + "': weight '" + sw[1].trim()
                    + "' is not a whole number");
            }
            sizes.add((int) Math.min(Integer.MAX_VALUE, size));
            weights.add(weight);
        }
        return new SizeMix(sizes, weights);
    }

    /** The canonical text: {@code SIZE:WEIGHT,...} in bytes, as {@link #parse} reads it back. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < sizes.size(); i++) {
            b.append(i == 0 ? "" : ",").append(sizes.get(i)).append(':').append(weights.get(i));
        }
        return b.toString();
    }

    /** Sequence numbers per cycle: the sum of the weights. */
    public int period() {
        return weights.stream().mapToInt(Integer::intValue).sum();
    }

    /** The largest size: what buffers and framing are sized for. */
    public int largest() {
        return sizes.stream().mapToInt(Integer::intValue).max().orElseThrow();
    }

    /**
     * The size index of each place in the cycle (a smooth weighted round robin: at each place the size furthest
     * behind its share goes next), so each size is spread over the cycle by its weight.
     */
    public int[] layout() {
        int n = sizes.size();
        int period = period();
        int[] out = new int[period];
        long[] credit = new long[n];
        for (int place = 0; place < period; place++) {
            int best = 0;
            for (int i = 0; i < n; i++) {
                credit[i] += weights.get(i);
                if (credit[i] > credit[best]) {
                    best = i;
                }
            }
            credit[best] -= period;
            out[place] = best;
        }
        return out;
    }

    /** A lookup of sizes by flow and sequence number, built once per pass (no allocation per message). */
    public Table table() {
        return new Table(this);
    }

    /** {@link SizeMix} laid out for lookups: {@link #index} and {@link #length} per message. */
    public static final class Table {
        private final int[] layout;
        private final int[] lengths;
        private final int period;

        private Table(SizeMix mix) {
            this.layout = mix.layout();
            this.period = layout.length;
            this.lengths = mix.sizes().stream().mapToInt(Integer::intValue).toArray();
        }

        /** The index into the mix's sizes of flow {@code flow}'s message {@code sequence} (0 and up). */
        public int index(int flow, long sequence) {
            return layout[(int) ((sequence + flow) % period)];
        }

        /** The length in bytes of flow {@code flow}'s message {@code sequence}. */
        public int length(int flow, long sequence) {
            return lengths[index(flow, sequence)];
        }

        /** How many sizes the mix has. */
        public int sizes() {
            return lengths.length;
        }

        /** Size {@code i}'s length in bytes. */
        public int lengthOf(int i) {
            return lengths[i];
        }

        /**
         * How many of flow {@code flow}'s sequence numbers in {@code [from, to)} have each size (added into
         * {@code counts}, one slot per size).
         */
        public void countRange(int flow, long from, long to, long[] counts) {
            if (to <= from) {
                return;
            }
            long whole = (to - from) / period;
            if (whole > 0) {
                for (int place = 0; place < period; place++) {
                    counts[layout[place]] += whole;
                }
            }
            for (long s = from + whole * period; s < to; s++) {
                counts[index(flow, s)]++;
            }
        }
    }

    /** For messages and errors: {@code 64 B x7, 570 B x4, 1518 B x1}. */
    public String describe() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < sizes.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%d B x%d", sizes.get(i), weights.get(i)));
        }
        return b.toString();
    }
}
