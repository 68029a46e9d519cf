package io.lossprobe.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;

/**
 * One end of a control connection: messages are a 4-byte big-endian length, then that many bytes of UTF-8 JSON
 * (an object with a {@code type} and the protocol {@code version}). A length above the cap is refused before
 * anything is allocated; every read has a timeout.
 *
 * <pre>
 *  +----------------+---------------------------------------+
 *  | length (int32) | JSON object, UTF-8, length bytes      |
 *  +----------------+---------------------------------------+
 * </pre>
 */
public final class ControlChannel implements AutoCloseable {
    public static final int VERSION = 1;
    /** Largest message either side accepts: a step result for 4,096 flows fits with room to spare. */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final int maxMessageBytes;

    public ControlChannel(Socket socket, int maxMessageBytes) throws IOException {
        this.socket = socket;
        this.maxMessageBytes = maxMessageBytes;
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    public static ObjectNode message(String type) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("type", type);
        node.put("version", VERSION);
        return node;
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    public synchronized void send(ObjectNode message) throws IOException {
        byte[] bytes = MAPPER.writeValueAsBytes(message);
        if (bytes.length > maxMessageBytes) {
            throw new ControlProtocolException("message of " + bytes.length + " bytes exceeds the cap of "
                + maxMessageBytes);
        }
        out.writeInt(bytes.length);
        out.write(bytes);
        out.flush();
    }

    /**
     * Reads one message within {@code timeoutMs}; checks the length cap, that it is a JSON object of this
     * protocol version and, when {@code expectedType} is not null, of that type (an {@code error} message from the
     * peer becomes an exception with its text).
     */
    public JsonNode receive(String expectedType, int timeoutMs) throws IOException {
        socket.setSoTimeout(timeoutMs);
        int length;
        try {
            length = in.readInt();
        } catch (SocketTimeoutException e) {
            throw new ControlProtocolException("no message within " + timeoutMs + " ms");
        } catch (EOFException e) {
            throw new EOFException("peer closed the control connection");
        }
        if (length <= 0 || length > maxMessageBytes) {
            throw new ControlProtocolException("message length " + length + " outside 1.." + maxMessageBytes);
        }
        byte[] bytes = new byte[length];
        try {
            in.readFully(bytes);
        } catch (SocketTimeoutException e) {
            throw new ControlProtocolException("message body not complete within " + timeoutMs + " ms");
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(bytes);
        } catch (IOException e) {
            throw new ControlProtocolException("message is not JSON");
        }
        if (node == null || !node.isObject()) {
            throw new ControlProtocolException("message is not a JSON object");
        }
        Fields f = new Fields(node);
        int version = f.integer("version", 0, 1_000);
        if (version != VERSION) {
            throw new ControlProtocolException("protocol version " + version + " is not " + VERSION);
        }
        String type = f.string("type", 64);
        if ("error".equals(type) && !"error".equals(expectedType)) {
            throw new ControlProtocolException("peer: " + f.string("message", 4096));
        }
        if (expectedType != null && !expectedType.equals(type)) {
            throw new ControlProtocolException("expected '" + expectedType + "', got '" + type + "'");
        }
        return node;
    }

    public String remoteAddress() {
        return socket.getInetAddress().getHostAddress();
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // Closing is best effort.
        }
    }
}
