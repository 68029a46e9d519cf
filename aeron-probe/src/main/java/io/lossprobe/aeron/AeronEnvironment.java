package io.lossprobe.aeron;

/**
 * The keys the Aeron transport reports its set-up under in a run's {@code environment}, each declared once; the
 * sender and the receiver put their values by {@link #key}.
 */
enum AeronEnvironment {
    /** The term buffer's length: the sender's publication's, the receiver's driver's option. */
    TERM_LENGTH("termLength"),
    MTU("mtu"),
    MAX_PAYLOAD_LENGTH("maxPayloadLength"),
    EMBEDDED_DRIVER("embeddedDriver"),
    RELIABLE("reliable"),
    HEADER_LENGTH("headerLength");

    /** The key its value is put under in the transport's environment. */
    final String key;

    AeronEnvironment(String key) {
        this.key = key;
    }
}
