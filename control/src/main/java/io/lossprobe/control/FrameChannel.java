package io.lossprobe.control;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * One end of a control connection, as frames: a 4-byte big-endian length, then that many bytes. Before the
 * handshake completes a frame is a UTF-8 JSON object; after it, the JSON object followed by a 16-byte MAC:
 *
 * <pre>
 *  +----------------+-------------------------------+----------------------+
 *  | length (int32) | JSON object, UTF-8            | MAC (16 bytes)       |
 *  +----------------+-------------------------------+----------------------+
 *  MAC = first 16 bytes of HMAC-SHA256(direction's key, sequence (int64, big-endian) || JSON)
 * </pre>
 *
 * Each direction has its own key ({@link Auth#frameKey}) and counts its frames from 0, and the count is in the
 * MAC, not on the wire: a frame altered, replayed, reordered, dropped or taken from the other direction fails the
 * check, and the connection ends. A length above the caller's cap is refused before anything is allocated; every
 * read runs against a deadline for the whole frame (not per read, so trickling bytes does not extend it); a write
 * that blocks longer than the write timeout closes the connection ({@link WriteWatchdog}).
 */
final class FrameChannel implements AutoCloseable {
    static final int MAC_BYTES = 16;

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final long writeTimeoutNs;
    /** When the write under way began (0: none), for the watchdog. */
    private volatile long writingSinceNs;
    private volatile String abortReason;
    private Mac sendMac;
    private Mac receiveMac;
    private long sendSeq;
    private long receiveSeq;
    private final byte[] seqBytes = new byte[8];

    FrameChannel(Socket socket, int writeTimeoutMs) throws IOException {
        this.socket = socket;
        this.writeTimeoutNs = TimeUnit.MILLISECONDS.toNanos(writeTimeoutMs);
        socket.setTcpNoDelay(true);
        this.in = new BufferedInputStream(socket.getInputStream(), 16 * 1024);
        this.out = socket.getOutputStream();
        WriteWatchdog.watch(this);
    }

    /** From now on every frame is MACed: {@code sendKey} for what this end sends, {@code receiveKey} for the rest. */
    synchronized void authenticate(byte[] sendKey, byte[] receiveKey) {
        sendMac = mac(sendKey);
        synchronized (in) {
            receiveMac = mac(receiveKey);
        }
    }

    boolean authenticated() {
        return sendMac != null;
    }

    private static Mac mac(byte[] key) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(key, "HmacSHA256"));
            return m;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** Sends one frame (MACed once authenticated) in one write. */
    synchronized void send(byte[] payload) throws IOException {
        int macBytes = sendMac == null ? 0 : MAC_BYTES;
        byte[] frame = new byte[4 + payload.length + macBytes];
        int length = payload.length + macBytes;
        frame[0] = (byte) (length >>> 24);
        frame[1] = (byte) (length >>> 16);
        frame[2] = (byte) (length >>> 8);
        frame[3] = (byte) length;
        System.arraycopy(payload, 0, frame, 4, payload.length);
        if (sendMac != null) {
            System.arraycopy(tag(sendMac, sendSeq++, payload, payload.length), 0, frame, 4 + payload.length,
                MAC_BYTES);
        }
        writingSinceNs = Math.max(1, System.nanoTime());
        try {
            out.write(frame);
            out.flush();
        } catch (IOException e) {
            throw failure(e);
        } finally {
            writingSinceNs = 0;
        }
    }

    private byte[] tag(Mac mac, long seq, byte[] payload, int length) {
        for (int i = 0; i < 8; i++) {
            seqBytes[i] = (byte) (seq >>> (56 - 8 * i));
        }
        mac.update(seqBytes);
        mac.update(payload, 0, length);
        return mac.doFinal();
    }

    /**
     * Reads one frame's JSON, at most {@code maxBytes} of it, all of it by {@code deadlineNs} ({@code
     * System.nanoTime()}); checks and strips the MAC once authenticated.
     */
    byte[] receive(int maxBytes, long deadlineNs) throws IOException {
        synchronized (in) {
            byte[] header = new byte[4];
            readFully(header, deadlineNs, true);
            int length = ((header[0] & 0xff) << 24) | ((header[1] & 0xff) << 16) | ((header[2] & 0xff) << 8)
                | (header[3] & 0xff);
            int macBytes = receiveMac == null ? 0 : MAC_BYTES;
            if (length <= macBytes || length - macBytes > maxBytes) {
                throw new ControlProtocolException("frame length " + length + " outside " + (macBytes + 1) + ".."
                    + (maxBytes + macBytes));
            }
            byte[] frame = new byte[length];
            readFully(frame, deadlineNs, false);
            if (receiveMac == null) {
                return frame;
            }
            int jsonBytes = length - MAC_BYTES;
            byte[] expected = Arrays.copyOf(tag(receiveMac, receiveSeq, frame, jsonBytes), MAC_BYTES);
            if (!MessageDigest.isEqual(expected, Arrays.copyOfRange(frame, jsonBytes, length))) {
                throw new BadMac(receiveSeq, frame);
            }
            receiveSeq++;
            return Arrays.copyOf(frame, jsonBytes);
        }
    }

    private void readFully(byte[] b, long deadlineNs, boolean frameStart) throws IOException {
        int off = 0;
        while (off < b.length) {
            long leftMs = TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime());
            if (leftMs <= 0) {
                throw off == 0 && frameStart ? new Silent()
                    : new ControlProtocolException("message not complete in time");
            }
            int n;
            try {
                socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, leftMs));
                n = in.read(b, off, b.length - off);
            } catch (SocketTimeoutException e) {
                continue; // the deadline check above decides
            } catch (IOException e) {
                throw failure(e);
            }
            if (n < 0) {
                throw new EOFException(off == 0 && frameStart ? "peer closed the control connection"
                    : "peer closed the control connection mid-message");
            }
            off += n;
        }
    }

    /** No frame began before the deadline: the peer was silent (gone, cut off, or only slow). */
    static final class Silent extends ControlProtocolException {
        private static final long serialVersionUID = 1L;

        Silent() {
            super("no message in time");
        }
    }

    /** A frame whose MAC does not verify; the frame as it came, for the one case a clear answer is expected. */
    static final class BadMac extends ControlProtocolException {
        private static final long serialVersionUID = 1L;
        final transient byte[] frame;
        final long seq;

        BadMac(long seq, byte[] frame) {
            super("control frame " + seq + " failed authentication: altered, replayed, reordered or dropped on the "
                + "way, or not from the authenticated peer; the session is over");
            this.seq = seq;
            this.frame = frame;
        }
    }

    /** A failed read or write, with the watchdog's reason when it closed the socket. */
    private IOException failure(IOException e) {
        String why = abortReason;
        return why != null ? new ControlProtocolException(why) : e;
    }

    /** The watchdog's check: a write blocked for longer than the write timeout closes the connection. */
    boolean writeOverdue(long nowNs) {
        long since = writingSinceNs;
        return since != 0 && nowNs - since > writeTimeoutNs;
    }

    /** Closes the connection, recording why for the thread blocked on it. */
    void abort(String reason) {
        abortReason = reason;
        close();
    }

    long writeTimeoutMs() {
        return TimeUnit.NANOSECONDS.toMillis(writeTimeoutNs);
    }

    /** The peer's address as lossprobe writes it (IPv6 in its short form). */
    String remoteAddress() {
        return io.lossprobe.core.plan.Addresses.text(socket.getInetAddress());
    }

    /** This end's address on the connection: where traffic to the other end leaves from when nothing binds it. */
    String localAddress() {
        return io.lossprobe.core.plan.Addresses.text(socket.getLocalAddress());
    }

    @Override
    public void close() {
        WriteWatchdog.unwatch(this);
        try {
            socket.close();
        } catch (IOException e) {
            // Closing is best effort.
        }
    }
}
