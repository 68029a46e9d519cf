package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.lossprobe.core.engine.StepHooks;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.StepResult;
import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** With {@code aeron.dir} the transport attaches to a driver someone else runs, and leaves it running. */
@Tag("system")
class AeronExternalDriverTest {
    @Test
    @Timeout(60)
    void attachesToAnExternalDriverAndLeavesItRunning(@TempDir Path dir) throws Exception {
        String aeronDir = dir.resolve("external-driver").toString();
        try (MediaDriver driver = MediaDriver.launch(new MediaDriver.Context().aeronDirectoryName(aeronDir)
            .dirDeleteOnStart(true).dirDeleteOnShutdown(true).threadingMode(ThreadingMode.SHARED)
            .sharedIdleStrategy(new BackoffIdleStrategy(10, 20, 1_000, 100_000)))) {
            RunResult result = AeronRuns.run(new AeronTransport(), AeronRuns.plan(4, 43500, List.of("2k"), 500),
                Map.of(AeronOptions.DIR_OPTION.key(), aeronDir, AeronOptions.TERM_LENGTH_OPTION.key(), "256k"),
                StepHooks.NONE);

            StepResult step = result.steps().get(0);
            assertThat(step.counts().sent()).isEqualTo(1000);
            assertThat(step.counts().lost()).isZero();
            assertThat(step.transportCounters()).containsKey("aeron.naksSent").doesNotContainKey("aeron.datagramsSent");
            assertThat(new File(driver.aeronDirectoryName(), "cnc.dat")).exists();
        }
        assertThat(new File(aeronDir)).doesNotExist();
    }
}
