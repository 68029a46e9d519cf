package io.lossprobe.cli;

import static io.lossprobe.cli.RunCommandTest.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lossprobe.core.contract.TransportContractTest;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import io.lossprobe.core.result.SizeCounts;
import io.lossprobe.core.result.StepResult;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --size-mix} against ground truth on loopback: nftables counts the UDP datagrams of each size arriving
 * at the run's ports (a message of N bytes is a datagram of N + 8 bytes of UDP) and drops a share of the 570-byte
 * ones only. Each size's {@code sent} is what nftables saw of that size, and its {@code lost} is exactly what
 * nftables dropped of it: 0 for the other sizes. Ports 44840-44843.
 */
@Tag("system")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SizeMixSystemTest {
    private static final int PORT = 44840;
    private static final int FLOWS = 4;
    private static final String TABLE = "lossprobe_sizemix_test";
    private static final int[] SIZES = {64, 570, 1518};

    @TempDir
    Path dir;

    @Test
    void eachSizesCountsAreWhatTheKernelSawAndLost() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "counting with nftables needs root");
        assumeTrue(Nft.run("nft", "--version") == 0, "nft missing");
        Nft.nft("delete table ip " + TABLE, true);
        Nft.nft("add table ip " + TABLE, false);
        Nft.nft("add chain ip " + TABLE + " in { type filter hook input priority -10 ; }", false);
        String ports = "udp dport " + PORT + "-" + (PORT + FLOWS - 1);
        // Drop 5 % of the 570-byte messages before any socket sees them; count what is left, per size.
        Nft.nft("add rule ip " + TABLE + " in ip daddr 127.0.0.1 " + ports
            + " udp length 578 numgen random mod 100 < 5 counter drop", false);
        for (int size : SIZES) {
            Nft.nft("add rule ip " + TABLE + " in ip daddr 127.0.0.1 " + ports + " udp length " + (size + 8)
                + " counter", false);
        }
        try {
            Path out = dir.resolve("mix.json");
            RunCommandTest.Outcome o = execute("run", "--transport", "udp", "--ports", Integer.toString(FLOWS),
                "--base-port", Integer.toString(PORT), "--levels", "6k,12k", "--duration", "1s", "--warmup", "0",
                "--drain", "300ms", "--size-mix", "imix", "-X", "udp.gso=off", "-o", out.toString());
            assertThat(o.exit()).as(o.out() + o.err()).isZero();
            assertThat(o.out()).contains("      sizes:  64B sent ");
            RunResult r = ResultFiles.read(out);
            TransportContractTest.assertIdentities(r);
            assertThat(r.plan().sizeMix()).isEqualTo("64:7,570:4,1518:1");
            long[] sent = new long[SIZES.length];
            long[] lost = new long[SIZES.length];
            for (StepResult s : r.steps()) {
                assertThat(s.messageSize()).isEqualTo(1518);
                assertThat(s.sizes()).extracting(SizeCounts::size).containsExactly(64, 570, 1518);
                long socketDrops = s.socketDrops() == null ? 0 : s.socketDrops();
                assertThat(socketDrops).as("the sockets dropped nothing: every loss is nftables'").isZero();
                for (int i = 0; i < SIZES.length; i++) {
                    SizeCounts c = s.sizes().get(i);
                    sent[i] += c.sent();
                    lost[i] += c.lost();
                    assertThat(c.received() + c.lost()).isEqualTo(c.sent());
                }
                // The mix's shares: 7, 4 and 1 in 12 of every flow's messages, to within one cycle per flow.
                long all = s.counts().sent();
                assertThat(s.sizes().get(0).sent()).isCloseTo(all * 7 / 12, org.assertj.core.data.Offset.offset(
                    (long) 12 * FLOWS));
            }
            String listing = Nft.listing(TABLE);
            long dropped = counter(listing, "udp length 578 numgen random mod 100 < 5 counter packets (\\d+)");
            assertThat(dropped).as("the rule dropped some 570-byte messages").isPositive();
            for (int i = 0; i < SIZES.length; i++) {
                long seen = counter(listing, "udp length " + (SIZES[i] + 8) + " counter packets (\\d+)");
                long drops = SIZES[i] == 570 ? dropped : 0;
                assertThat(seen + drops).as(SIZES[i] + "-byte messages nftables saw arrive, against sent")
                    .isEqualTo(sent[i]);
                assertThat(lost[i]).as(SIZES[i] + "-byte messages lost, against nftables' drops").isEqualTo(drops);
            }
        } finally {
            Nft.nft("delete table ip " + TABLE, true);
        }
    }

    @Test
    void badMixesAreOneLineAndExit2() {
        for (List<String> extra : List.of(List.of("--size-mix", "64"), List.of("--size-mix", "32:1,64:1"),
            List.of("--size-mix", "64:1,64:2"), List.of("--size-mix", "64:0,128:1"),
            List.of("--size-mix", "64:x,128:1"), List.of("--size-mix", "imix", "--size", "128"),
            List.of("--size-mix", "imix", "--sizes", "64,128"), List.of("--size-mix", "imix", "--mode", "echo"),
            List.of("--size-mix", "64:1,70000:1"))) {
            List<String> args = new ArrayList<>(List.of("run", "--ports", "1", "--base-port", Integer.toString(PORT),
                "-o", dir.resolve("r.json").toString()));
            args.addAll(extra);
            RunCommandTest.Outcome o = execute(args.toArray(String[]::new));
            assertThat(o.exit()).as(extra + ": " + o.err()).isEqualTo(2);
            assertThat(o.err().strip().lines()).as(o.err()).hasSize(1);
            assertThat(o.err()).as(extra.toString()).containsAnyOf("--size-mix", "--sizes");
        }
    }

    private static long counter(String listing, String regex) {
        Matcher m = Pattern.compile(regex).matcher(listing);
        assertThat(m.find()).as(regex + " in\n" + listing).isTrue();
        return Long.parseLong(m.group(1));
    }
}
