package io.lossprobe.udp;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A host as the native records carry it (family and 16 address bytes, read as two native-order longs), compared
 * without allocating. An IPv4 host also matches its IPv4-mapped IPv6 form (::ffff:a.b.c.d), which is how a
 * dual-stack socket (Netty's default) reports an IPv4 peer. {@link StampedReader} checks its datagrams' senders
 * with it.
 */
final class HostKey {
    static final int AF_INET6 = 10;
    private final int family;
    private final long high;
    private final long low;
    private final long mappedHigh;
    private final long mappedLow;
    private final boolean ipv4;

    HostKey(InetAddress address) {
        byte[] b = address.getAddress();
        ByteBuffer raw = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
        raw.put(b);
        this.ipv4 = address instanceof Inet4Address;
        this.family = ipv4 ? NativeUdp.AF_INET : AF_INET6;
        this.high = raw.getLong(0);
        this.low = raw.getLong(8);
        ByteBuffer mapped = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
        if (ipv4) {
            mapped.put(new byte[10]).put((byte) 0xFF).put((byte) 0xFF).put(b);
        }
        this.mappedHigh = mapped.getLong(0);
        this.mappedLow = mapped.getLong(8);
    }

    boolean matches(ByteBuffer meta, int m) {
        int f = meta.getShort(m + NativeUdp.META_FAMILY);
        long h = meta.getLong(m + NativeUdp.META_ADDR);
        long l = meta.getLong(m + NativeUdp.META_ADDR + 8);
        return (f == family && h == high && l == low)
            || (ipv4 && f == AF_INET6 && h == mappedHigh && l == mappedLow);
    }
}
