package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lossprobe.core.engine.RunEngine;
import io.lossprobe.core.engine.RunListener;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.result.FlowResult;
import io.lossprobe.core.result.Latency;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The precision timing mode over real sockets on loopback: the results say which mode and which timestamp source
 * produced every delay figure, and each way of falling back (asked for user stamps, the native piece turned off in
 * a process of its own) runs the mode all the same and says so.
 */
@Tag("system")
class UdpPrecisionResultsTest {
    private static final int PORT = 47400;

    static Plan plan(String mode, int ports, String level) {
        return new Plan(List.of("udp"), ports, PORT, List.of(Level.parse(level)), TimeUnit.MILLISECONDS.toNanos(600),
            TimeUnit.MILLISECONDS.toNanos(200), TimeUnit.SECONDS.toNanos(2), 64, "127.0.0.1", mode, 0);
    }

    static RunResult run(Plan plan, Map<String, String> options) throws Exception {
        return new RunEngine(plan, Map.of("udp", new UdpTransport()), options, new RunListener() {
        }, StepHooks.NONE).run();
    }

    private static void assertMeasuredBy(Latency figure, String source, String timing) {
        assertThat(figure.timing()).isEqualTo(timing);
        assertThat(figure.timestampSource()).isEqualTo(source);
    }

    @Test
    @Timeout(120)
    void aPrecisionRunSaysItsModeAndTimestampSourceOnEveryDelayFigure() throws Exception {
        RunResult result = run(plan(Plan.STREAM, 4, "4k"), Map.of("timing", "precision"));
        StepResult step = result.steps().get(0);
        String source = NativeUdp.available() ? "kernel" : "user";
        // All 2,400 scheduled; a spinning sender on a loaded 2-core host may still fall behind (CI once sent 1,600),
        // which is not what this test is about: whatever was sent arrived.
        assertThat(step.counts().scheduled()).isEqualTo(2_400);
        assertThat(step.counts().received()).isEqualTo(step.counts().sent()).isPositive();
        assertMeasuredBy(step.delay(), source, "precision");
        assertMeasuredBy(step.transit(), source, "precision");
        assertMeasuredBy(step.ipdv(), source, "precision");
        assertThat(step.senderLag().timing()).isEqualTo("precision");
        for (FlowResult f : step.flows()) {
            assertMeasuredBy(f.delay(), source, "precision");
            assertMeasuredBy(f.transit(), source, "precision");
        }
        Map<String, Long> settings = result.environment().transportSettings();
        assertThat(settings).containsEntry("udp.timingPrecision", 1L)
            .containsEntry("udp.kernelTimestamps", NativeUdp.available() ? 1L : 0L)
            .containsEntry("udp.receiveThreads",
                    (long) Math.max(1, (Runtime.getRuntime().availableProcessors() - 1) / 2));
        if (NativeUdp.available()) {
            assertThat(settings).containsEntry("udp.sendTimerSlackNs", 1L).containsEntry("udp.receiveTimerSlackNs", 1L);
            // The measured threads' short scheduler slice, where the kernel keeps one (0 where it does not).
            assertThat(settings.get("udp.sendSliceNs")).isIn(100_000L, 0L)
                    .isEqualTo(settings.get("udp.receiveSliceNs"));
        }
        // Spinning costs a core while the step runs, and the results say so.
        assertThat(step.cpu().processPercent()).isGreaterThan(50);
    }

    @Test
    @Timeout(120)
    void echoStampsRequestsAndRepliesInTheKernelInBothModes() throws Exception {
        String source = NativeUdp.available() ? "kernel" : "user";
        for (String timing : List.of("precision", "default")) {
            RunResult result = run(plan(Plan.ECHO, 1, "1k"), Map.of("timing", timing));
            StepResult step = result.steps().get(0);
            assertThat(step.echo().repliesReceived()).isEqualTo(step.echo().requestsSent()).isEqualTo(600);
            assertMeasuredBy(step.delay(), source, timing);
            assertMeasuredBy(step.echo().rtt(), source, timing);
            assertMeasuredBy(step.flows().get(0).echo().rtt(), source, timing);
            assertThat(result.environment().transportSettings())
                .containsEntry("udp.replyKernelTimestamps", NativeUdp.available() ? 1L : 0L);
            // On a host too small for its spinning threads, a precision step says its tails are the host's.
            boolean expected = timing.equals("precision")
                && Runtime.getRuntime().availableProcessors() <= UdpSender.FEW_CPUS;
            assertThat(step.warnings().stream().anyMatch(w -> w.startsWith("precision timing spins")))
                .as("%s on %d CPUs: %s", timing, Runtime.getRuntime().availableProcessors(), step.warnings())
                .isEqualTo(expected);
        }
        StepResult user = run(plan(Plan.ECHO, 1, "1k"), Map.of("udp.timestamps", "user")).steps().get(0);
        assertMeasuredBy(user.echo().rtt(), "user", "default");
    }

    @Test
    @Timeout(120)
    void userStampsWhenAskedForAndKernelStampsInTheDefaultModeToo() throws Exception {
        StepResult user = run(plan(Plan.STREAM, 2, "2k"), Map.of("timing", "precision", "udp.timestamps", "user"))
            .steps().get(0);
        assertMeasuredBy(user.delay(), "user", "precision");
        StepResult byDefault = run(plan(Plan.STREAM, 2, "2k"), Map.of()).steps().get(0);
        String source = NativeUdp.available() ? "kernel" : "user";
        assertMeasuredBy(byDefault.delay(), source, "default");
        assertMeasuredBy(byDefault.transit(), source, "default");
        StepResult nio = run(plan(Plan.STREAM, 2, "2k"), Map.of("udp.io", "nio")).steps().get(0);
        assertMeasuredBy(nio.delay(), "user", "default");
    }

    /** In a JVM of its own with -Dlossprobe.native=off: the fallback a build without gcc gets. */
    @Test
    @Timeout(180)
    void withoutTheNativePieceThePrecisionModeRunsOnUserStampsAndSaysSo() throws Exception {
        File out = File.createTempFile("precision-fallback", ".json");
        try {
            Process p = new ProcessBuilder(new File(System.getProperty("java.home"), "bin/java").getPath(),
                "-D" + NativeUdp.OFF_PROPERTY + "=off", "-cp", System.getProperty("java.class.path"),
                FallbackRun.class.getName(), out.getPath()).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(150, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(output).isZero();
            JsonNode result = new ObjectMapper().readTree(out);
            JsonNode delay = result.path("steps").path(0).path("delay");
            assertThat(delay.path("timing").asText()).isEqualTo("precision");
            assertThat(delay.path("timestampSource").asText()).isEqualTo("user");
            assertThat(delay.path("count").asLong()).isEqualTo(1_200);
            JsonNode settings = result.path("environment").path("transportSettings");
            assertThat(settings.path("udp.kernelTimestamps").asLong()).isZero();
            assertThat(settings.path("udp.timingPrecision").asLong()).isEqualTo(1);
            assertThat(output).contains("native piece: turned off (-Dlossprobe.native=off)");
        } finally {
            out.delete();
        }
    }

    /** The child process of the fallback test: one precision run, its result as JSON in the file named. */
    static final class FallbackRun {
        public static void main(String[] args) throws Exception {
            System.out.println("native piece: " + NativeUdp.unavailableBecause());
            RunResult result = run(plan(Plan.STREAM, 2, "2k"), Map.of("timing", "precision"));
            io.lossprobe.core.result.ResultFiles.write(new File(args[0]).toPath(), result);
            System.exit(0);
        }
    }
}
