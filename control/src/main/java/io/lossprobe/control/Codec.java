package io.lossprobe.control;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidTypeIdException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;

/**
 * Control messages to and from JSON, strictly: every field present and of its exact type (no "1" for 1, no 1.5 for
 * a whole number, no null for a number), no unknown fields, no duplicate keys, nothing after the object, shallow
 * nesting. Anything else is a {@link ControlProtocolException} whose text is safe to print.
 */
final class Codec {
    /** The control protocol's version; both ends must speak the same one. */
    /**
     * 3: steps carry their rate and window (rate searches), receivers open per message size, intervals.
     * 4: the plan carries its traffic classes ({@code dscp}).
     * 5: the plan carries its send pattern and seed ({@code pattern}, {@code seed}).
     * 6: tests between two servers ({@code run --from}): the plan request's wrapped {@code dataKey}, open's
     * {@code source}, {@code send-to} and {@code host-sample}.
     * 7: the plan's size mix ({@code sizeMix}) and a flow summary's {@code receivedBySize}.
     * 8: senders behind a NAT's back: sender-ready's {@code sourcePorts} and {@code observed}, {@code punched}
     * and its {@code punches}.
     * 9: the union over a multicast step's receivers: close-step's {@code lostSets} and a flow summary's
     * {@code lostRanges}.
     */
    static final int VERSION = 9;

    private static final ObjectMapper MAPPER = JsonMapper.builder()
        .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
        .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
        .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
        .build();

    static {
        MAPPER.getFactory().setStreamReadConstraints(StreamReadConstraints.builder()
            .maxNestingDepth(16).maxNumberLength(64).maxStringLength(4 << 20).build());
    }

    private Codec() {
    }

    static byte[] encode(Request message) {
        return write(message, Request.class);
    }

    static byte[] encode(Reply message) {
        return write(message, Reply.class);
    }

    private static byte[] write(Object message, Class<?> as) {
        try {
            return MAPPER.writerFor(as).writeValueAsBytes(message);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode " + message.getClass().getSimpleName(), e);
        }
    }

    static Request request(byte[] frame) throws ControlProtocolException {
        return read(frame, Request.class);
    }

    static Reply reply(byte[] frame) throws ControlProtocolException {
        return read(frame, Reply.class);
    }

    /** The frame as a JSON tree (for the handshake's version check before the message is typed). */
    static JsonNode tree(byte[] frame) throws ControlProtocolException {
        try {
            JsonNode node = MAPPER.readTree(frame);
            if (node == null || !node.isObject()) {
                throw new ControlProtocolException("message is not a JSON object");
            }
            return node;
        } catch (IOException e) {
            throw new ControlProtocolException("message is not JSON: " + reason(e));
        }
    }

    static <T> T read(JsonNode node, Class<T> type) throws ControlProtocolException {
        try {
            return MAPPER.treeToValue(node, type);
        } catch (IOException | IllegalArgumentException e) {
            throw new ControlProtocolException("bad message: " + reason(e));
        }
    }

    private static <T> T read(byte[] frame, Class<T> type) throws ControlProtocolException {
        try {
            return MAPPER.readValue(frame, type);
        } catch (IOException | IllegalArgumentException e) {
            throw new ControlProtocolException("bad message: " + reason(e));
        }
    }

    /** The message's type as it travels ({@code begin-step}). */
    static String typeOf(Object message) {
        for (Class<?> base : new Class<?>[] {Request.class, Reply.class}) {
            for (com.fasterxml.jackson.annotation.JsonSubTypes.Type t
                : base.getAnnotation(com.fasterxml.jackson.annotation.JsonSubTypes.class).value()) {
                if (t.value() == message.getClass()) {
                    return t.name();
                }
            }
        }
        return message.getClass().getSimpleName();
    }

    /** Jackson's first line, or a record's own check, as safe peer text; the type name for an unknown message. */
    private static String reason(Exception e) {
        if (e instanceof InvalidTypeIdException t) {
            return t.getTypeId() == null ? "no message type" : "unknown message type '"
                    + PeerText.clean(t.getTypeId()) + "'";
        }
        if (e instanceof com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException u) {
            return "unknown field '" + PeerText.clean(u.getPropertyName()) + "'";
        }
        if (e instanceof JsonMappingException j && j.getOriginalMessage() != null
            && j.getOriginalMessage().startsWith("Missing creator property") && !j.getPath().isEmpty()) {
            return "missing field '" + PeerText.clean(j.getPath().get(j.getPath().size() - 1).getFieldName()) + "'";
        }
        Throwable t = e;
        if (e instanceof ValueInstantiationException && e.getCause() != null) {
            t = e.getCause();
        }
        String m = t instanceof JsonMappingException j ? j.getOriginalMessage() : t.getMessage();
        if (t instanceof JsonMappingException j && !j.getPath().isEmpty()) {
            StringBuilder at = new StringBuilder();
            for (JsonMappingException.Reference r : j.getPath()) {
                at.append(r.getFieldName() != null ? "." + r.getFieldName() : "[" + r.getIndex() + "]");
            }
            m = m + " (at " + at.substring(at.charAt(0) == '.' ? 1 : 0) + ")";
        }
        return PeerText.clean(m == null ? t.getClass().getSimpleName() : m.lines().findFirst().orElse(m));
    }
}
