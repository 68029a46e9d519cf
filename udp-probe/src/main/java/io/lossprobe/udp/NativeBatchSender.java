package io.lossprobe.udp;

import io.lossprobe.core.transport.MessageWriter;
import io.lossprobe.core.transport.SendFailureListener;
import io.lossprobe.core.transport.SendPacing;
import io.lossprobe.core.wire.MessageHeader;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The native send path ({@code udp.send=native}): every flow's due messages of one send cycle go out through one
 * unconnected socket in as few {@code sendmmsg} calls as the kernel allows (one per 256 sends), each flow's run of
 * consecutive messages as one UDP_SEGMENT (GSO) send to its port. No per-message or per-batch object: the messages
 * are laid out in one direct buffer allocated at open, a send is a row of a table in another, and what each row
 * carries (flow, step, first sequence, count) sits in arrays beside it.
 *
 * <p>The writers only fill the table; the cycle's sends leave in one call made by a task queued behind the send
 * loop's cycle on the same single-threaded executor ({@link #flushTask}), so a cycle that reached 48 flows makes one
 * system call, not 48. Memory is fixed: each flow has a region of {@link #regionMessages} messages (at most 64, at
 * most 64 KiB), so {@code flows x regionBytes} in all, whatever the network does.
 *
 * <p>Accounting, as the Netty path's: a send the kernel refuses (ENOBUFS with IP_RECVERR, a pending ICMP error;
 * refused after others in the same call, it is tried once more, as Netty does) failed with every message it carried,
 * and its sequence range goes to the failure ledger (warm-up messages
 * are no one's loss). A full socket buffer (EAGAIN) fails nothing: the unsent rows stay queued, every writer answers
 * {@link MessageWriter#BLOCKED} until they are out (retried at most once per cycle), so the flows fall behind
 * instead. All of it runs on the send executor's one thread.
 */
final class NativeBatchSender {
    /*
     * One entry of the send table (ints, native order): the names and values of lossprobe_udp.h, which the library
     * lists (NativeUdp.layout0) for NativeLayoutTest.
     */
    static final int ENTRY_BYTES = 32;
    static final int ENTRY_PORT = 0;
    static final int ENTRY_OFFSET = 4;
    static final int ENTRY_LENGTH = 8;
    static final int ENTRY_SEGMENT = 12;
    static final int ENTRY_RESULT = 16;
    /** The entry's TOS / traffic-class byte, sent as an IP_TOS (IPV6_TCLASS) control message; -1: none. */
    static final int ENTRY_TOS = 24;
    /** In the destination buffer: error-queue entries sendBatch0 emptied since the last flush looked. */
    private static final int DEST_DRAINED = 20;
    /** After a flush that left rows unsent (EAGAIN), the next try. */
    private static final long RETRY_NS = 50_000;
    /** Most bytes one flow's region holds. */
    static final int MAX_REGION_BYTES = 64 * 1024;

    private final int fd;
    private final int segmentsPerSend;
    /** Send-table rows per flow: as many as its region holds messages of the largest size. */
    private final int regionRows;
    private final int regionBytes;
    private final int[] ports;
    private final int[] tos;
    private final SendFailureListener failures;
    private final ScheduledExecutorService executor;
    private final ByteBuffer data;
    private final ByteBuffer table;
    private final ByteBuffer dest;
    private final MessageWriter[] writers;
    private final Runnable flushTask = this::flushQueued;

    /** Per flow: bytes of its region in use, its rows in the table, and its last row (-1: none to extend). */
    private final int[] regionUsed;
    private final int[] rowsOf;
    private final int[] lastRow;
    /** Per row of the table. */
    private final int[] rowFlow;
    private final long[] rowFirst;
    private final int[] rowCount;
    private final long[] rowWord1;
    private final boolean[] rowData;
    private int rows;
    private boolean flushQueued;
    /** The last flush left rows unsent (EAGAIN): every writer is blocked until they are out. */
    private boolean congested;
    private long lastRetryNs = Long.MIN_VALUE;
    /** Written on the send thread, read by the engine after a step. */
    private volatile long errorQueuePurges;
    private volatile long sendCalls;

    private NativeBatchSender(int fd, InetAddress target, int[] ports, int[] tos, int size, int segmentsPerSend,
                              SendFailureListener failures, ScheduledExecutorService executor) {
        this.fd = fd;
        this.tos = tos.clone();
        this.segmentsPerSend = segmentsPerSend;
        this.ports = ports;
        this.failures = failures;
        this.executor = executor;
        int flows = ports.length;
        int regionMessages = regionMessages(size);
        this.regionRows = regionMessages;
        this.regionBytes = regionMessages * size;
        this.data = ByteBuffer.allocateDirect(flows * regionBytes); // zeroed: the padding after each header
        int maxRows = flows * regionMessages;
        this.table = ByteBuffer.allocateDirect(maxRows * ENTRY_BYTES).order(ByteOrder.nativeOrder());
        this.dest = ByteBuffer.allocateDirect(32).order(ByteOrder.nativeOrder());
        byte[] address = target.getAddress();
        dest.putInt(0, address.length == 4 ? 2 : 10); // AF_INET, AF_INET6
        dest.put(4, address);
        regionUsed = new int[flows];
        rowsOf = new int[flows];
        lastRow = new int[flows];
        java.util.Arrays.fill(lastRow, -1);
        rowFlow = new int[maxRows];
        rowFirst = new long[maxRows];
        rowCount = new int[maxRows];
        rowWord1 = new long[maxRows];
        rowData = new boolean[maxRows];
        writers = new MessageWriter[flows];
        for (int i = 0; i < flows; i++) {
            writers[i] = new FlowWriter(i);
        }
    }

    /** Messages one flow's region holds: a cycle's batch limit, within {@link #MAX_REGION_BYTES}. */
    static int regionMessages(int size) {
        return Math.max(1, Math.min(SendPacing.BATCH_LIMIT, MAX_REGION_BYTES / size));
    }

    /**
     * Opens the socket (non-blocking, unconnected; the kernel picks the source address by route, as for a connected
     * socket) with the send buffer asked for and IP_RECVERR when {@code recvErr}.
     */
    static NativeBatchSender open(InetAddress target, int[] ports, int[] tos, int size, int segmentsPerSend,
                                  int sndbuf, boolean recvErr, SendFailureListener failures,
                                  ScheduledExecutorService executor)
        throws IOException {
        int fd = NativeUdp.udpSocket0(target instanceof Inet6Address ? 10 : 2, sndbuf, recvErr ? 1 : 0);
        if (fd < 0) {
            throw new IOException("cannot open the native UDP sender: " + NativeUdp.describeErrno(-fd));
        }
        return new NativeBatchSender(fd, target, ports, tos, size, segmentsPerSend, failures, executor);
    }

    /** {@link #open} with no traffic class on any flow. */
    static NativeBatchSender open(InetAddress target, int[] ports, int size, int segmentsPerSend, int sndbuf,
                                  boolean recvErr, SendFailureListener failures, ScheduledExecutorService executor)
        throws IOException {
        int[] none = new int[ports.length];
        java.util.Arrays.fill(none, -1);
        return open(target, ports, none, size, segmentsPerSend, sndbuf, recvErr, failures, executor);
    }

    /**
     * Binds the socket to {@code source} (null: any address) on a port the kernel picks, before anything is sent on
     * it, so its receivers can punch to it ({@code SenderSpec.punched}) and its data leaves from {@code source};
     * returns the port.
     */
    int bind(InetAddress source) throws IOException {
        int family = dest.getInt(0);
        byte[] address = source == null ? null : source.getAddress();
        if (address != null && address.length != (family == 2 ? 4 : 16)) {
            throw new IOException("cannot send from " + source.getHostAddress() + " to an address of another family");
        }
        int port = NativeUdp.bind0(fd, family, address);
        if (port < 0) {
            throw new IOException("cannot bind the native UDP sender: " + NativeUdp.describeErrno(-port));
        }
        return port;
    }

    /**
     * Reads this socket's datagrams for up to {@code timeoutNs}, or until every flow has its destination, giving
     * each to {@code punches}; a flow that gets one sends to its port from then on (the address is the target's,
     * which {@code punches} demands). Before any step, on the engine's thread: the send thread reads {@link #ports}
     * only in tasks queued after this returns. Returns the flows still without a destination.
     */
    int[] awaitPunches(PunchedDestinations punches, long timeoutNs) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(io.lossprobe.core.wire.Punch.BYTES + 1);
        ByteBuffer from = ByteBuffer.allocateDirect(24).order(ByteOrder.nativeOrder());
        byte[] bytes = new byte[io.lossprobe.core.wire.Punch.BYTES + 1];
        long deadline = System.nanoTime() + timeoutNs;
        while (punches.missing().length > 0) {
            long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (leftMs <= 0) {
                break;
            }
            int n = NativeUdp.receiveFrom0(fd, buffer, bytes.length, from, (int) Math.min(leftMs, 100));
            if (n == -11 || n == -111 || n == -113 || n == -101) {
                continue; // EAGAIN: nothing within the wait; an ICMP error surfacing on the read is no punch
            }
            if (n < 0) {
                throw new IOException("reading punches on the native UDP sender: " + NativeUdp.describeErrno(-n));
            }
            int length = Math.min(n, bytes.length); // a longer datagram is no punch: its length stays too long
            buffer.get(0, bytes, 0, length);
            int flow = punches.offer(-1, bytes, length, PunchedDestinations.sourceOf(from));
            if (flow >= 0) {
                ports[flow] = punches.of(flow).getPort();
            }
        }
        return punches.missing();
    }

    MessageWriter writer(int flow) {
        return writers[flow];
    }

    /** The send buffer the kernel granted. */
    long sendBufferGranted() {
        return NativeUdp.intOption0(fd, 1, 7); // SOL_SOCKET, SO_SNDBUF
    }

    /** IP_RECVERR (or IPV6_RECVERR) as read back from the socket: 1 on, 0 off. */
    long recvErrOn() {
        boolean v6 = dest.getInt(0) == 10;
        return Math.max(0, NativeUdp.intOption0(fd, v6 ? 41 : 0, v6 ? 25 : 11));
    }

    long errorQueuePurges() {
        return errorQueuePurges;
    }

    /** sendmmsg calls made so far (for the transport's settings after a run, and tests). */
    long sendCalls() {
        return sendCalls;
    }

    private int write(int flow, long word0, long word1, long sequence, long intendedNs, long actualNs, long tag) {
        if (congested) {
            if (actualNs == lastRetryNs) {
                return MessageWriter.BLOCKED;
            }
            lastRetryNs = actualNs; // once per cycle: the send loop hands every message of a cycle the same time
            flush();
            if (congested) {
                return MessageWriter.BLOCKED;
            }
        }
        int length = MessageHeader.length(word1); // the plan's size, or with a size mix this message's
        // Out with what is queued when this flow's region is full: its bytes, or (with a size mix, whose small
        // messages fill the bytes more slowly than the rows, one a size change) its share of the send table.
        if (regionUsed[flow] + length > regionBytes || rowsOf[flow] >= regionRows) {
            flush(); // this flow's region is full (sends of a cycle beyond one region): out with what is queued
            if (congested) {
                return MessageWriter.BLOCKED;
            }
        }
        boolean isData = MessageHeader.kind(word0) == MessageHeader.KIND_DATA;
        int row = lastRow[flow];
        if (row < 0 || rowCount[row] == segmentsPerSend || rowFirst[row] + rowCount[row] != sequence
            || rowWord1[row] != word1 || rowData[row] != isData) {
            // A send is one run of consecutive sequences, so a failure names exactly its messages.
            row = rows++;
            rowFlow[row] = flow;
            rowFirst[row] = sequence;
            rowCount[row] = 0;
            rowWord1[row] = word1;
            rowData[row] = isData;
            rowsOf[flow]++;
            lastRow[flow] = row;
            int at = row * ENTRY_BYTES;
            table.putInt(at + ENTRY_PORT, ports[flow]);
            table.putInt(at + ENTRY_TOS, tos[flow]); // one socket for every flow: the class travels per send
            table.putInt(at + ENTRY_OFFSET, flow * regionBytes + regionUsed[flow]);
        }
        int offset = flow * regionBytes + regionUsed[flow];
        data.putLong(offset + MessageHeader.WORD0_OFFSET, word0);
        data.putLong(offset + MessageHeader.WORD1_OFFSET, word1);
        data.putLong(offset + MessageHeader.SEQUENCE_OFFSET, sequence);
        data.putLong(offset + MessageHeader.SEND_TIME_OFFSET, intendedNs);
        data.putLong(offset + MessageHeader.ACTUAL_SEND_TIME_OFFSET, actualNs);
        data.putLong(offset + MessageHeader.TAG_OFFSET, tag);
        regionUsed[flow] += length;
        int count = ++rowCount[row];
        int at = row * ENTRY_BYTES;
        table.putInt(at + ENTRY_LENGTH, count * length); // a row is of one size: its word1 is its messages'
        table.putInt(at + ENTRY_SEGMENT, count > 1 ? length : 0);
        if (!flushQueued) {
            flushQueued = true;
            executor.execute(flushTask); // behind the running cycle: its sends leave together
        }
        return MessageWriter.ACCEPTED;
    }

    private void flushQueued() {
        flushQueued = false;
        flush();
    }

    /** Sends every queued row; rows the kernel could not take now (EAGAIN) stay queued, first in line. */
    void flush() {
        if (rows == 0) {
            return;
        }
        int done = NativeUdp.sendBatch0(fd, data, table, rows, dest);
        sendCalls = sendCalls + 1;
        if (done < 0) {
            done = 0; // a bad buffer: nothing was sent; the rows stay (and the writers block)
        }
        for (int row = 0; row < done; row++) {
            int result = table.getInt(row * ENTRY_BYTES + ENTRY_RESULT);
            int flow = rowFlow[row];
            if (result < 0) {
                if (rowData[row]) {
                    failures.failed(flow, MessageHeader.step(rowWord1[row]), rowFirst[row], rowCount[row]);
                }
            }
            if (--rowsOf[flow] == 0) {
                regionUsed[flow] = 0;
            }
        }
        for (int row = 0; row < rows; row++) {
            lastRow[rowFlow[row]] = -1; // rows move below: none is extended across a flush
        }
        int left = rows - done;
        if (left > 0 && done > 0) {
            for (int i = 0; i < left; i++) { // forwards: each row moves to a lower index
                int from = (done + i) * ENTRY_BYTES;
                int to = i * ENTRY_BYTES;
                for (int b = 0; b < ENTRY_BYTES; b += 4) {
                    table.putInt(to + b, table.getInt(from + b));
                }
            }
            System.arraycopy(rowFlow, done, rowFlow, 0, left);
            System.arraycopy(rowFirst, done, rowFirst, 0, left);
            System.arraycopy(rowCount, done, rowCount, 0, left);
            System.arraycopy(rowWord1, done, rowWord1, 0, left);
            System.arraycopy(rowData, done, rowData, 0, left);
        }
        rows = left;
        congested = left > 0;
        if (congested && !flushQueued) {
            // Also when nothing more falls due (the window ended): the rows leave as soon as the buffer has room.
            flushQueued = true;
            executor.schedule(flushTask, RETRY_NS, TimeUnit.NANOSECONDS);
        }
        if (dest.getInt(DEST_DRAINED) > 0) {
            // A refusal (a pending ICMP error, say) made sendBatch0 empty the error queue IP_RECVERR fills.
            dest.putInt(DEST_DRAINED, 0);
            errorQueuePurges = errorQueuePurges + 1;
        }
    }

    /** True when a flush left rows unsent (for tests). */
    boolean congested() {
        return congested;
    }

    /** Closes the socket; call once the send executor has stopped. */
    void close() {
        NativeUdp.close(fd);
    }

    /** One flow's writer: the flush is the cycle's, queued by the first write. */
    private final class FlowWriter implements MessageWriter {
        private final int flow;

        FlowWriter(int flow) {
            this.flow = flow;
        }

        @Override
        public int write(long word0, long word1, long sequence, long intendedNs, long actualNs, long tag) {
            return NativeBatchSender.this.write(flow, word0, word1, sequence, intendedNs, actualNs, tag);
        }

        @Override
        public void flush() {
            // Nothing here: the task the first write queued sends every flow's messages of the cycle at once.
        }
    }
}
