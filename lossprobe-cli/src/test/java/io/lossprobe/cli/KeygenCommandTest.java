package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.cli.RunCommandTest.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Secrets: keygen makes a strong one only its owner reads; weak or exposed ones are refused or warned about. */
class KeygenCommandTest {
    @Test
    void keygenWritesA256BitSecretWithMode0600AndNeverOverwrites(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("secret");
        Outcome o = RunCommandTest.execute("keygen", file.toString());
        assertThat(o.exit()).as(o.err()).isZero();
        assertThat(o.out()).contains("256-bit secret", "mode 0600");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        assertThat(Files.readString(file)).matches("[0-9a-f]{64}\n");
        String first = Files.readString(file);

        Outcome again = RunCommandTest.execute("keygen", file.toString());
        assertThat(again.exit()).isEqualTo(2);
        assertThat(again.err().strip()).isEqualTo("lossprobe: " + file + " exists; keygen does not overwrite a secret");
        assertThat(Files.readString(file)).isEqualTo(first);

        Path other = dir.resolve("other");
        assertThat(RunCommandTest.execute("keygen", other.toString()).exit()).isZero();
        assertThat(Files.readString(other)).isNotEqualTo(first);
    }

    @Test
    void aSecretShorterThan16BytesIsRefusedWithAHintToKeygen(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("short");
        Files.writeString(file, "hunter2\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        for (String[] args : new String[][] {{"serve", "--port", "7", "--secret-file", file.toString()},
            {"run", "--target", "127.0.0.1:1", "--secret-file", file.toString(), "--transport", "udp"}}) {
            Outcome o = RunCommandTest.execute(args);
            assertThat(o.exit()).as(o.err()).isEqualTo(2);
            assertThat(o.err().strip()).isEqualTo("lossprobe: the shared secret is 7 bytes; at least 16 are needed: "
                + "make one with 'lossprobe keygen FILE'");
        }
    }

    @Test
    void aSecretFileOthersCanReadOrAShortSecretGetsAWarning(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared");
        Files.writeString(file, "sixteen bytes ok\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        // Nothing listens on port 1: the run fails after the secret is read, before any traffic.
        Outcome o = RunCommandTest.execute("run", "--target", "127.0.0.1:1", "--secret-file", file.toString(),
            "--transport", "udp", "-o", dir.resolve("r.json").toString());
        assertThat(o.exit()).isEqualTo(1);
        assertThat(o.err()).contains("lossprobe: warning: the secret file " + file + " is readable by every user "
            + "(mode rw-r--r--): chmod o-r " + file);
        assertThat(o.err()).contains("lossprobe: warning: the shared secret is only 16 bytes");
        assertThat(o.err()).contains("cannot reach lossprobe serve at 127.0.0.1:1");
    }
}
