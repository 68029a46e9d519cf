package io.lossprobe.cli;

import io.lossprobe.core.wire.MessageHeader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;

/**
 * What a packet capture says about lossprobe's data datagrams: for each one captured (a pcap file with nanosecond
 * stamps, Ethernet framing, IPv4), its capture time on {@link System#nanoTime()}'s clock minus the actual send time
 * the message carries. Capture stamps are the realtime clock's; the offset between that and the monotonic clock is
 * read here, in the same host, which is why it works only for captures on this host's namespaces. A UDP GSO send is
 * one packet on a veth (it keeps the super-packet): its messages, all stamped at the same send, count once each.
 */
final class PcapStamps {
    private static final int NANOSECOND_MAGIC = 0xa1b23c4d;
    private static final int ETHERNET = 1;

    private PcapStamps() {
    }

    /**
     * Capture time minus actual send time, in ns, of every data (not warm-up) message of {@code size} bytes in
     * {@code pcap}, sorted.
     */
    static long[] sinceActualSend(Path pcap, int size) throws IOException {
        long offset = realtimeMinusMonotonicNs();
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(pcap)).order(ByteOrder.LITTLE_ENDIAN);
        if (b.getInt(0) != NANOSECOND_MAGIC || b.getInt(20) != ETHERNET) {
            throw new IOException("not a nanosecond Ethernet pcap: " + pcap);
        }
        long[] out = new long[1024];
        int n = 0;
        for (int at = 24; at + 16 <= b.capacity(); ) {
            long realtimeNs = (b.getInt(at) & 0xffffffffL) * 1_000_000_000L + (b.getInt(at + 4) & 0xffffffffL);
            int captured = b.getInt(at + 8);
            int length = b.getInt(at + 12);
            int ip = at + 16 + 14;
            at += 16 + captured;
            if (at > b.capacity() || captured < 14 + 20 + 8 + MessageHeader.LENGTH || (b.get(ip) >> 4) != 4
                || b.get(ip + 9) != 17) {
                continue;
            }
            int headers = 14 + (b.get(ip) & 0x0f) * 4 + 8;
            int payload = ip - 14 + headers;
            ByteBuffer m = b.duplicate().order(ByteOrder.BIG_ENDIAN);
            if (MessageHeader.kind(m.getLong(payload + MessageHeader.WORD0_OFFSET)) != MessageHeader.KIND_DATA) {
                continue;
            }
            long gap = realtimeNs - offset - m.getLong(payload + MessageHeader.ACTUAL_SEND_TIME_OFFSET);
            for (int k = 0; k < Math.max(1, (length - headers) / size); k++) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, 2 * n);
                }
                out[n++] = gap;
            }
        }
        long[] gaps = Arrays.copyOf(out, n);
        Arrays.sort(gaps);
        return gaps;
    }

    /** The {@code q} quantile (0-1) of sorted {@code values}. */
    static long quantile(long[] values, double q) {
        return values[Math.min(values.length - 1, (int) (values.length * q))];
    }

    /** The realtime clock minus the monotonic one, from the narrowest of a few bracketed readings. */
    static long realtimeMinusMonotonicNs() {
        long best = Long.MAX_VALUE;
        long offset = 0;
        for (int i = 0; i < 50; i++) {
            long before = System.nanoTime();
            Instant now = Instant.now();
            long after = System.nanoTime();
            if (after - before < best) {
                best = after - before;
                offset = now.getEpochSecond() * 1_000_000_000L + now.getNano() - (before + after) / 2;
            }
        }
        return offset;
    }
}
