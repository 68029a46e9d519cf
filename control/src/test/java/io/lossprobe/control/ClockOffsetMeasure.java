package io.lossprobe.control;

import io.lossprobe.core.result.ClockOffset;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Measures clock-offset estimates against a real server on loopback (same host, so the true offset is 0): per
 * estimate, its uncertainty, its actual error and how long it took. Not a test; run by hand:
 *
 * <pre>
 *   mvn -B -o -q -DskipTests package
 *   java -cp control/target/test-classes:lossprobe-cli/target/lossprobe.jar \
 *       io.lossprobe.control.ClockOffsetMeasure 50 16 16 16     # runs, then exchanges per batch
 * </pre>
 */
final class ClockOffsetMeasure {
    private ClockOffsetMeasure() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 50;
        int[] exchangeCounts = args.length > 1
            ? Arrays.stream(args, 1, args.length).mapToInt(Integer::parseInt).toArray()
            : new int[] {ClockSync.DEFAULT_EXCHANGES};
        Auth auth = Auth.ofSecret("clock measurement secret");
        ServerLimits limits = ControlTesting.LIMITS.withTimeouts(2_000, 30_000, 10_000);
        try (ControlServer server = new ControlServer("127.0.0.1", 0, auth, limits,
                ControlTesting.only(new ControlTesting.NoTransport()), null);
             ControlClient client = ControlClient.connect("127.0.0.1", server.port(), auth, 5_000)) {
            client.negotiate(new Plan(List.of("udp"), 1, 22000, List.of(Level.parse("1k")), 1_000_000_000L, 0, 0,
                64, "127.0.0.1"), 1, Map.of());
            // The first estimate in a fresh JVM runs the control path's JSON code interpreted, as a real run's
            // first estimate does: reported alone, then left out of the figures below.
            long start = System.nanoTime();
            ClockOffset first = client.clockOffset(exchangeCounts[0]);
            System.out.printf("first estimate (%d exchanges, cold JVM): uncertainty %.1f us, |error| %.1f us, "
                    + "took %.1f us%n", exchangeCounts[0], first.uncertaintyNs() / 1e3,
                Math.abs(first.offsetNs()) / 1e3, (System.nanoTime() - start) / 1e3);
            for (int exchanges : exchangeCounts) {
                long[] uncertainty = new long[runs];
                long[] error = new long[runs];
                long[] rtt = new long[runs];
                long[] took = new long[runs];
                int outside = 0;
                for (int i = 0; i < runs; i++) {
                    start = System.nanoTime();
                    ClockOffset o = client.clockOffset(exchanges);
                    took[i] = System.nanoTime() - start;
                    uncertainty[i] = o.uncertaintyNs();
                    error[i] = Math.abs(o.offsetNs());
                    rtt[i] = o.rttNs();
                    if (error[i] > uncertainty[i]) {
                        outside++;
                    }
                }
                System.out.printf("%d estimates of %d exchanges on loopback (true offset 0):%n", runs, exchanges);
                print("uncertainty", uncertainty);
                print("|error|", error);
                print("best rtt", rtt);
                print("time/estimate", took);
                System.out.printf("  estimates whose error exceeded their uncertainty: %d%n", outside);
            }
        }
    }

    private static void print(String what, long[] values) {
        long[] v = values.clone();
        Arrays.sort(v);
        System.out.printf("  %-14s min %8.1f us  median %8.1f us  p90 %8.1f us  max %8.1f us%n", what,
            v[0] / 1e3, v[v.length / 2] / 1e3, v[(int) (v.length * 0.9)] / 1e3, v[v.length - 1] / 1e3);
    }
}
