package io.lossprobe.control;

import com.fasterxml.jackson.databind.JsonNode;

/** Type- and range-checked reads of a control message's fields; anything else is a protocol error. */
final class Fields {
    private final JsonNode node;

    Fields(JsonNode node) {
        this.node = node;
    }

    private JsonNode field(String name) throws ControlProtocolException {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            throw new ControlProtocolException("missing field '" + name + "'");
        }
        return v;
    }

    String string(String name, int maxLength) throws ControlProtocolException {
        JsonNode v = field(name);
        if (!v.isTextual() || v.asText().length() > maxLength) {
            throw new ControlProtocolException("field '" + name + "' must be a string of at most " + maxLength
                + " characters");
        }
        return v.asText();
    }

    int integer(String name, int min, int max) throws ControlProtocolException {
        return (int) longValue(name, min, max);
    }

    long longValue(String name, long min, long max) throws ControlProtocolException {
        JsonNode v = field(name);
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min || v.asLong() > max) {
            throw new ControlProtocolException("field '" + name + "' must be a whole number in " + min + ".." + max);
        }
        return v.asLong();
    }

    long[] longs(String name, int length, long min, long max) throws ControlProtocolException {
        JsonNode v = field(name);
        if (!v.isArray() || v.size() != length) {
            throw new ControlProtocolException("field '" + name + "' must be an array of " + length + " numbers");
        }
        long[] out = new long[length];
        for (int i = 0; i < length; i++) {
            JsonNode e = v.get(i);
            if (!e.isIntegralNumber() || !e.canConvertToLong() || e.asLong() < min || e.asLong() > max) {
                throw new ControlProtocolException("field '" + name + "' element " + i + " out of range");
            }
            out[i] = e.asLong();
        }
        return out;
    }

    JsonNode object(String name) throws ControlProtocolException {
        JsonNode v = field(name);
        if (!v.isObject()) {
            throw new ControlProtocolException("field '" + name + "' must be an object");
        }
        return v;
    }
}
