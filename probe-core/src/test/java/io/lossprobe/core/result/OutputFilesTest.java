package io.lossprobe.core.result;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.testing.Scratch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class OutputFilesTest {
    private static final byte[] JSON = "{\"status\" : \"complete\"}\n".getBytes(StandardCharsets.UTF_8);

    @Test
    void aRegularFileIsReplacedWholeAndWorldReadableWithNothingLeftBeside(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("r.json"), "old and longer than the new content, by far");
        OutputFiles.write(file, JSON);
        assertThat(file).hasBinaryContent(JSON);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-r--r--");
        try (var listing = Files.list(dir)) {
            assertThat(listing.toList()).containsExactly(file);
        }
    }

    /**
     * Replacing a file keeps its permissions where they are stricter than 0644: a results file or textfile someone
     * made 0600 (it names hosts) was widened to 0644 by the next run's write. A new file is 0644; 0664 is not kept
     * wider than 0644.
     */
    @Test
    void aReplacedFileKeepsItsStricterPermissions(@TempDir Path dir) throws IOException {
        String[][] cases = {{"rw-------", "rw-------"}, {"rw-r-----", "rw-r-----"}, {"rw-rw-rw-", "rw-r--r--"},
            {"r--------", "r--------"}};
        for (String[] c : cases) {
            Path file = Files.writeString(dir.resolve(c[0] + ".json"), "old");
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(c[0]));
            OutputFiles.write(file, JSON);
            assertThat(file).hasBinaryContent(JSON);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).as(c[0]).isEqualTo(c[1]);
        }
        Path fresh = dir.resolve("new.json");
        OutputFiles.write(fresh, JSON);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(fresh))).isEqualTo("rw-r--r--");
    }

    @Test
    void aLinkPlantedAtThePathIsReplacedNotFollowed(@TempDir Path dir) throws IOException {
        Path victim = Files.writeString(dir.resolve("victim"), "precious");
        Path planted = Files.createSymbolicLink(dir.resolve("r.udp.step0.delay.hlog"), victim);
        Path dangling = Files.createSymbolicLink(dir.resolve("r.json"), dir.resolve("would-be-created"));

        OutputFiles.write(planted, JSON);
        OutputFiles.write(dangling, JSON);

        assertThat(victim).hasContent("precious");
        assertThat(dir.resolve("would-be-created")).doesNotExist();
        assertThat(Files.isSymbolicLink(planted)).isFalse();
        assertThat(planted).hasBinaryContent(JSON);
        assertThat(dangling).hasBinaryContent(JSON);
    }

    @Test
    void aDirectoryIsRefused(@TempDir Path dir) {
        assertThatThrownBy(() -> OutputFiles.write(dir, JSON)).isInstanceOf(IOException.class)
            .hasMessageContaining("is a directory");
    }

    @Test
    void aNullDeviceIsWrittenThroughAndStaysTheSameDevice(@TempDir Path dir) throws Exception {
        Path node = Scratch.characterDevice(dir.resolve("null"), 1, 3);
        long rdev = Scratch.deviceNumber(node);
        assertThat(OutputFiles.isStream(node)).isTrue();

        OutputFiles.write(node, JSON);
        OutputFiles.write(node, JSON);

        assertThat(Scratch.isCharacterDevice(node)).isTrue();
        assertThat(Scratch.deviceNumber(node)).isEqualTo(rdev);
        try (var listing = Files.list(dir)) {
            assertThat(listing.toList()).containsExactly(node);
        }
    }

    @Test
    void aFullDeviceFailsWithNoSpaceAndStaysTheSameDevice(@TempDir Path dir) throws Exception {
        Path node = Scratch.characterDevice(dir.resolve("full"), 1, 7);
        long rdev = Scratch.deviceNumber(node);

        assertThatThrownBy(() -> OutputFiles.write(node, JSON)).isInstanceOf(IOException.class)
            .hasMessageContaining("No space left on device");

        assertThat(Scratch.isCharacterDevice(node)).isTrue();
        assertThat(Scratch.deviceNumber(node)).isEqualTo(rdev);
    }

    @Test
    @Timeout(30)
    void aFifoIsWrittenThroughToItsReader(@TempDir Path dir) throws Exception {
        Path fifo = dir.resolve("fifo");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
        CompletableFuture<byte[]> read = CompletableFuture.supplyAsync(() -> {
            try {
                return Files.readAllBytes(fifo);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        OutputFiles.write(fifo, JSON);
        assertThat(read.get(20, TimeUnit.SECONDS)).isEqualTo(JSON);
        assertThat(Files.isRegularFile(fifo, LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void aFullDiskFailsTheWriteLeavesTheOldFileAndNoTemporaryAndCanStillBeMarkedFailed(@TempDir Path dir)
        throws Exception {
        RunResult running = ResultFilesTest.minimal("running");
        byte[] first = ResultFiles.mapper().writeValueAsBytes(running);
        try (Scratch.Tmpfs fs = Scratch.tmpfs(dir, 64 * 1024)) {
            Path file = fs.dir().resolve("r.json");
            OutputFiles.write(file, first);
            assertThat(fs.fill()).isPositive();

            byte[] bigger = new byte[first.length + 8192];
            assertThatThrownBy(() -> OutputFiles.write(file, bigger)).isInstanceOf(IOException.class)
                .hasMessageContaining("No space left on device");
            try (var listing = Files.list(fs.dir())) {
                assertThat(listing.map(p -> p.getFileName().toString()).toList())
                    .containsExactlyInAnyOrderElementsOf(List.of("r.json", "filler"));
            }
            assertThat(file).hasBinaryContent(first);

            assertThat(ResultFiles.markFailedInPlace(file, first)).isTrue();
            RunResult read = ResultFiles.read(file);
            assertThat(read.status()).hasToString("failed");
            assertThat(read.startedAt()).isEqualTo(running.startedAt());
            assertThat(Files.size(file)).isEqualTo(first.length);
            // Only over the bytes it wrote: a file someone else rewrote meanwhile is left alone.
            assertThat(ResultFiles.markFailedInPlace(file, first)).isFalse();
        }
    }

    @Test
    void aLinkToADeviceOrADirectoryIsRefusedAndNothingMoves(@TempDir Path dir) throws Exception {
        Path node = Scratch.characterDevice(dir.resolve("null"), 1, 3);
        long rdev = Scratch.deviceNumber(node);
        Path toDevice = Files.createSymbolicLink(dir.resolve("lossprobe-20261201-000000.json"), node);
        Path toDir = Files.createSymbolicLink(dir.resolve("r.json"), Files.createDirectory(dir.resolve("d")));

        assertThatThrownBy(() -> OutputFiles.write(toDevice, JSON)).isInstanceOf(IOException.class)
            .hasMessageContaining("is a link to something that is not a regular file");
        assertThatThrownBy(() -> OutputFiles.write(toDir, JSON)).isInstanceOf(IOException.class);

        assertThat(Files.isSymbolicLink(toDevice)).isTrue();
        assertThat(Files.isSymbolicLink(toDir)).isTrue();
        assertThat(Scratch.isCharacterDevice(node)).isTrue();
        assertThat(Scratch.deviceNumber(node)).isEqualTo(rdev);
        assertThat(OutputFiles.isStream(toDevice)).as("a link is never a stream").isFalse();
    }

    @Test
    void theProcessesOwnOutputByNameIsAStream() {
        for (String name : List.of("/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/2")) {
            assertThat(OutputFiles.isStream(Path.of(name))).as(name).isTrue();
        }
    }
}
