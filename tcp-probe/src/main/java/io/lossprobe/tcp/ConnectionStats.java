package io.lossprobe.tcp;

/**
 * What happened to one flow's receiving connections since the last report. Touched only on the receiving event
 * loop; read and reset there by {@link TcpReceiver#endStep}.
 */
final class ConnectionStats {
    /** Connections accepted. */
    long accepted;
    /** Connections that ended, for any reason (peer close, reset, garbage, local close). */
    long closed;
    /** Connections that ended on an I/O error (e.g. reset by the peer). */
    long errors;
    /** Connections closed because the stream held bytes that are not a lossprobe message. */
    long garbageCloses;
    /** Bytes of an incomplete message left when a connection ended: never delivered, so never received. */
    long truncatedBytes;
    /**
     * Connections refused at once because they cannot be the flow's sender's: from another address than the
     * controller's, or while the flow already has its one connection.
     */
    long refused;
    /** Connections closed after hearing nothing for the idle timeout. */
    long idleCloses;
    /** Told of each connection's I/O error as it is counted in {@link #errors}, for the step's notes. */
    java.util.function.Consumer<Throwable> onError = cause -> { };

    void reset() {
        accepted = 0;
        closed = 0;
        errors = 0;
        garbageCloses = 0;
        truncatedBytes = 0;
        refused = 0;
        idleCloses = 0;
    }
}
