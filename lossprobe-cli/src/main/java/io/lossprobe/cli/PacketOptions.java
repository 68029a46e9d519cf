package io.lossprobe.cli;

import io.lossprobe.core.accounting.PacketSlots;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.plan.Units;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** {@code run --packets FILE}: every message of every step as a row (docs/packets.md). */
final class PacketOptions {
    /** The heap a step's records may take at most, as a share of the JVM's maximum heap. */
    static final double MAX_HEAP_SHARE = 0.5;

    @Option(names = "--packets", paramLabel = "FILE",
        description = "Also write one CSV row per message of every step (flow, sequence, intended, actual and "
            + "receive time, and whether it was received, lost, late, duplicated or reordered); FILE.gz is "
            + "gzipped. Needs the receivers in this process (the embedded run or --reverse). See docs/packets.md.")
    Path packets;

    @Option(names = "--packets-limit", paramLabel = "ROWS", defaultValue = "1M",
        description = "Rows per step at most, shared evenly by the flows (each flow's first ones); the rest are "
            + "counted, not written. Default: ${DEFAULT-VALUE}.")
    String limit;

    @Option(names = "--packets-every", paramLabel = "N", defaultValue = "1",
        description = "Write every N-th sequence number of each flow only (a sample that still adds up per row). "
            + "Default: ${DEFAULT-VALUE}.")
    int every;

    boolean given() {
        return packets != null;
    }

    /** Rows per step; bad usage for a bad number, or records a step of the plan could not hold in the heap. */
    long rowsPerStep(CommandLine cl, Plan plan) {
        long rows;
        try {
            rows = Units.parseDecimal(limit, "--packets-limit");
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
        if (every < 1) {
            throw new CommandLine.ParameterException(cl, "--packets-every must be at least 1: " + every);
        }
        // A pass keeps its steps' records until it ends (late arrivals are counted until then).
        long bytes = rows * (PacketSlots.BYTES_PER_ROW + 2L * Long.BYTES) * Math.max(1, plan.levels().size());
        long allowed = (long) (Runtime.getRuntime().maxMemory() * MAX_HEAP_SHARE);
        if (bytes > allowed) {
            throw new CommandLine.ParameterException(cl, "--packets-limit " + limit + " over "
                + plan.levels().size() + " level(s) would hold " + bytes / (1 << 20) + " MiB of records, more than "
                + allowed / (1 << 20) + " MiB (half the heap): lower it, sample with --packets-every, or give "
                + "java a larger -Xmx");
        }
        return rows;
    }
}
