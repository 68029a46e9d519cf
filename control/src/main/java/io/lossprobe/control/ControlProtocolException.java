package io.lossprobe.control;

import java.io.IOException;

/** A control message that breaks the protocol: wrong type, missing or out-of-range field, bad size, bad auth. */
public class ControlProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    public ControlProtocolException(String message) {
        super(message);
    }
}
