package io.lossprobe.core.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The datagram a receiver behind a NAT sends to its flow's sender before a step's traffic, so that the NAT maps a
 * way back in and the sender learns where the flow's data must go: the address and port the punch arrived from
 * (docs/two-hosts.md, "Behind a NAT"). {@value #BYTES} bytes, little-endian: a magic word, the run id and the flow,
 * then a SipHash-2-4 tag over both under a key of its own, derived from the pass's key (which never travels), so a
 * punch is good for one pass of one run and one flow only. A sender takes a flow's first punch that verifies, from
 * the address its control connection comes from, and ignores everything else: anything short, long, altered,
 * forged, or replayed into another run, pass or flow.
 */
public final class Punch {
    public static final int BYTES = 24;
    /** "LPPUNCH1" read as a little-endian long. */
    static final long MAGIC = 0x3148434e5550504cL;

    private final MessageAuth key;
    private final int runId;
    private final int flows;

    /**
     * @param passKey the pass's data key ({@link MessageAuth#forPass}), which both ends hold
     * @param flows   the pass's flows: a punch naming another is ignored
     */
    public Punch(MessageAuth passKey, int runId, int flows) {
        this.key = passKey.forPass("lossprobe punch v1", 0);
        this.runId = runId;
        this.flows = flows;
    }

    /** Flow {@code flow}'s punch. */
    public byte[] encode(int flow) {
        if (flow < 0 || flow >= flows) {
            throw new IllegalArgumentException("flow " + flow + " of " + flows);
        }
        long ids = ids(flow);
        ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(MAGIC).putLong(ids).putLong(key.tag(MAGIC, ids, 0, 0, 0));
        return b.array();
    }

    /** The flow {@code length} bytes at {@code offset} are the punch of, or -1 when they are not one. */
    public int flowOf(byte[] datagram, int offset, int length) {
        if (length != BYTES || offset < 0 || datagram.length - offset < BYTES) {
            return -1;
        }
        ByteBuffer b = ByteBuffer.wrap(datagram, offset, BYTES).order(ByteOrder.LITTLE_ENDIAN);
        long magic = b.getLong();
        long ids = b.getLong();
        long tag = b.getLong();
        int flow = (int) ids;
        if (magic != MAGIC || (int) (ids >>> 32) != runId || flow < 0 || flow >= flows
            || !key.verify(MAGIC, ids, 0, 0, 0, tag)) {
            return -1;
        }
        return flow;
    }

    private long ids(int flow) {
        return (long) runId << 32 | (flow & 0xFFFFFFFFL);
    }
}
