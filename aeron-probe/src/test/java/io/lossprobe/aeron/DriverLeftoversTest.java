package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.testing.Scratch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DriverLeftoversTest {
    /** Above the kernel's largest possible pid_max (2^22 on 64-bit): never a live process. */
    private static final long DEAD_PID = (1L << 22) + 1;
    private static final long LIVE_PID = ProcessHandle.current().pid();

    @Test
    void aDeadProcessesDirectoriesGoAndALiveOnesStay(@TempDir Path base) throws IOException {
        Path deadOld = leftover(base, DEAD_PID + "-1");
        Path deadNew = leftover(base, DEAD_PID + "-2-0a1b2c3d");
        Path live = leftover(base, LIVE_PID + "-7-00ff00ff");
        Path other = Files.createDirectory(base.resolve("not-lossprobe-" + DEAD_PID + "-1"));

        assertThat(DriverLeftovers.clean(base)).containsExactlyInAnyOrder(deadOld, deadNew);

        assertThat(deadOld).doesNotExist();
        assertThat(deadNew).doesNotExist();
        assertThat(live.resolve("cnc.dat")).exists();
        assertThat(other).exists();
    }

    @Test
    void aLinkAtALeftoversNameIsNeitherFollowedNorRemoved(@TempDir Path base, @TempDir Path elsewhere)
        throws IOException {
        Path precious = Files.writeString(elsewhere.resolve("precious"), "keep");
        Path link = Files.createSymbolicLink(base.resolve(AeronDriver.DIR_PREFIX + DEAD_PID + "-3"), elsewhere);
        // Inside a real leftover, a link is removed, its target kept.
        Path dead = leftover(base, DEAD_PID + "-4");
        Files.createSymbolicLink(dead.resolve("link"), elsewhere);

        assertThat(DriverLeftovers.clean(base)).containsExactly(dead);

        assertThat(Files.isSymbolicLink(link)).isTrue();
        assertThat(precious).hasContent("keep");
        assertThat(dead).doesNotExist();
    }

    @Test
    void anotherUsersLeftoverStays(@TempDir Path base) throws Exception {
        Scratch.assumeRoot();
        Path theirs = leftover(base, DEAD_PID + "-5");
        Files.setAttribute(theirs, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);

        assertThat(DriverLeftovers.clean(base)).isEmpty();
        assertThat(theirs.resolve("cnc.dat")).exists();
    }

    private static Path leftover(Path base, String suffix) throws IOException {
        Path dir = Files.createDirectory(base.resolve(AeronDriver.DIR_PREFIX + suffix));
        Files.write(dir.resolve("cnc.dat"), new byte[4096]);
        return dir;
    }
}
