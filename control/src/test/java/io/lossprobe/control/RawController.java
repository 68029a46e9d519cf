package io.lossprobe.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A controller written out by hand on a raw socket, for tests that misbehave on purpose: any frame, any bytes,
 * MACed like a genuine controller's once {@link #handshake} is done (or with a chosen sequence number).
 */
final class RawController implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    /** A plan request as the controller writes it (every field present: the codec refuses a missing one). */
    static String planMessage(int runId, Object plan) throws com.fasterxml.jackson.core.JsonProcessingException {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("type", "plan");
        m.put("runId", runId);
        m.put("plan", plan);
        m.put("dataKey", null);
        return JSON.writeValueAsString(m);
    }
    final Socket socket;
    final DataInputStream in;
    final DataOutputStream out;
    private Mac sendMac;
    private Mac receiveMac;
    long sendSeq;
    private long receiveSeq;

    private RawController(Socket socket) throws IOException {
        this.socket = socket;
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = new DataOutputStream(socket.getOutputStream());
    }

    static RawController connect(int port) throws IOException {
        return connect(null, port);
    }

    /** On a {@link java.nio.channels.SocketChannel}, so a test can switch it to non-blocking writes. */
    static RawController connectChannel(int port) throws IOException {
        java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(
            new InetSocketAddress("127.0.0.1", port));
        return new RawController(ch.socket());
    }

    /** From {@code localAddress} (another loopback address, to look like another host), or any when null. */
    static RawController connect(String localAddress, int port) throws IOException {
        Socket s = new Socket();
        if (localAddress != null) {
            s.bind(new InetSocketAddress(InetAddress.getByName(localAddress), 0));
        }
        s.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
        return new RawController(s);
    }

    /** Hello, the server's proof checked, our proof; then every frame is MACed. Returns the welcome. */
    JsonNode handshake(Auth auth) throws IOException {
        String clientNonce = Auth.nonce();
        send("{\"type\":\"hello\",\"version\":" + Codec.VERSION + ",\"nonce\":\"" + clientNonce + "\"}");
        JsonNode challenge = read();
        String serverNonce = challenge.get("nonce").asText();
        if (!Auth.verify(auth.serverProof(clientNonce, serverNonce), challenge.get("proof").asText())) {
            throw new IOException("server proof wrong");
        }
        send("{\"type\":\"auth\",\"proof\":\"" + auth.clientProof(clientNonce, serverNonce) + "\"}");
        byte[] key = auth.sessionKey(clientNonce, serverNonce);
        sendMac = mac(Auth.frameKey(key, "client"));
        receiveMac = mac(Auth.frameKey(key, "server"));
        return read();
    }

    private static Mac mac(byte[] key) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(key, "HmacSHA256"));
            return m;
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    byte[] tag(Mac mac, long seq, byte[] payload) {
        byte[] s = new byte[8];
        for (int i = 0; i < 8; i++) {
            s[i] = (byte) (seq >>> (56 - 8 * i));
        }
        mac.update(s);
        mac.update(payload);
        return Arrays.copyOf(mac.doFinal(), FrameChannel.MAC_BYTES);
    }

    /** The frame this controller would send next for {@code payload} (length, payload, MAC once authenticated). */
    byte[] frame(byte[] payload) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] mac = sendMac == null ? new byte[0] : tag(sendMac, sendSeq++, payload);
        int length = payload.length + mac.length;
        b.write(length >>> 24);
        b.write(length >>> 16);
        b.write(length >>> 8);
        b.write(length);
        b.writeBytes(payload);
        b.writeBytes(mac);
        return b.toByteArray();
    }

    void send(String json) throws IOException {
        sendBytes(json.getBytes(StandardCharsets.UTF_8));
    }

    void sendBytes(byte[] payload) throws IOException {
        out.write(frame(payload));
        out.flush();
    }

    void raw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** One frame's JSON; the MAC checked once authenticated. */
    JsonNode read() throws IOException {
        int length = in.readInt();
        byte[] b = new byte[length];
        in.readFully(b);
        if (receiveMac == null) {
            return JSON.readTree(b);
        }
        byte[] json = Arrays.copyOf(b, length - FrameChannel.MAC_BYTES);
        if (!MessageDigest.isEqual(tag(receiveMac, receiveSeq++, json),
            Arrays.copyOfRange(b, length - FrameChannel.MAC_BYTES, length))) {
            throw new IOException("reply MAC wrong");
        }
        return JSON.readTree(json);
    }

    /** One frame as it came (length, JSON and MAC), counted as received. */
    byte[] readRaw() throws IOException {
        int length = in.readInt();
        byte[] b = new byte[4 + length];
        b[0] = (byte) (length >>> 24);
        b[1] = (byte) (length >>> 16);
        b[2] = (byte) (length >>> 8);
        b[3] = (byte) length;
        in.readFully(b, 4, length);
        receiveSeq++;
        return b;
    }

    /** Reads until the server closes (or 10 s pass); returns what it said, as text. */
    String drain() throws IOException {
        InputStream s = socket.getInputStream();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try {
            int n;
            while ((n = s.read(buf)) >= 0) {
                all.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server did not close within 10 s");
        } catch (java.net.SocketException e) {
            // Reset: closed with our bytes unread.
        }
        return all.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
