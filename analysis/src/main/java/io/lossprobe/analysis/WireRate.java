package io.lossprobe.analysis;

/**
 * Bits per second of a message rate: the payload (the messages themselves, lossprobe's 48-byte header included) and
 * on the wire, as an Ethernet link with a 1500-byte MTU would carry them. On the wire counts, per frame, the
 * Ethernet header, FCS, preamble and inter-frame gap (14 + 4 + 8 + 12 = 38 bytes) and the IP header (20, IPv6 40);
 * per transport (docs/results.md#bits-per-second):
 *
 * <ul>
 *   <li>udp: the UDP header (8) once per message, every IP fragment a frame of its own (1480 bytes of IPv4
 *   payload, 1448 of IPv6 payload after its 8-byte fragment header).</li>
 *   <li>tcp: messages packed into full segments of MSS 1448 (1500 - 20 - 32, the TCP header with timestamps;
 *   IPv6 1428): a lower bound, since a small write with Nagle off goes out in a segment of its own.</li>
 *   <li>aeron: each message framed with Aeron's 32-byte data header and padded to 32 bytes (a message larger than
 *   the 1408-byte Aeron MTU in fragments of 1376), frames packed into full 1408-byte datagrams with UDP's 8 bytes: a
 *   lower bound as for TCP.</li>
 *   <li>any other transport: the payload only.</li>
 * </ul>
 */
public final class WireRate {
    /** Ethernet header 14, FCS 4, preamble and start delimiter 8, inter-frame gap 12. */
    public static final int ETHERNET_BYTES = 38;
    public static final int MTU = 1500;
    static final int AERON_MTU = 1408;
    static final int AERON_HEADER = 32;

    private WireRate() {
    }

    /** The messages' own bits per second. */
    public static double payloadBits(double messagesPerSecond, int messageSize) {
        return messagesPerSecond * messageSize * 8.0;
    }

    /** Bits per second on an Ethernet link (see the class comment). */
    public static double wireBits(String transport, double messagesPerSecond, int messageSize, boolean ipv6) {
        return messagesPerSecond * wireBytes(transport, messageSize, ipv6) * 8.0;
    }

    /** Bytes one message takes on the wire, on average. */
    public static double wireBytes(String transport, int size, boolean ipv6) {
        int ip = ipv6 ? 40 : 20;
        switch (transport) {
            case "udp" -> {
                int ipPayload = size + 8;
                if (ipPayload <= MTU - ip) {
                    return ipPayload + ip + ETHERNET_BYTES;
                }
                int perFragment = ipv6 ? 1448 : 1480;
                int fragments = (ipPayload + perFragment - 1) / perFragment;
                return ipPayload + fragments * (ip + (ipv6 ? 8 : 0) + ETHERNET_BYTES);
            }
            case "tcp" -> {
                int mss = MTU - ip - 32;
                return size * (1 + (double) (ip + 32 + ETHERNET_BYTES) / mss);
            }
            case "aeron" -> {
                int perFragment = AERON_MTU - AERON_HEADER;
                int fragments = Math.max(1, (size + perFragment - 1) / perFragment);
                int framed = 0;
                for (int f = 0, left = size; f < fragments; f++, left -= perFragment) {
                    framed += align32(Math.min(left, perFragment) + AERON_HEADER);
                }
                return framed * (1 + (double) (8 + ip + ETHERNET_BYTES) / AERON_MTU);
            }
            default -> {
                return size;
            }
        }
    }

    private static int align32(int bytes) {
        return (bytes + 31) & ~31;
    }

    /** Megabits per second, for a table: 512.0, 1,024. */
    public static String megabits(double bitsPerSecond) {
        double mb = bitsPerSecond / 1e6;
        return mb < 1000 ? String.format(java.util.Locale.ROOT, "%.1f", mb)
            : String.format(java.util.Locale.ROOT, "%,.0f", mb);
    }
}
