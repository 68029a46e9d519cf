package io.lossprobe.control;

/**
 * Runs both halves of the handshake's work once, off the wire: the JSON codecs of every handshake message and the
 * MACs. Their first use in a cold JVM loads classes and security providers, which on a busy host takes seconds
 * (measured on loopback beside builds: 0.8 s from connect to the controller's hello, 1.9 s from hello to a fresh
 * server's challenge), and the server allows a whole handshake {@link ServerLimits#handshakeTimeoutMs()} from the
 * accept. That deadline is there for a slow or silent peer; it should not measure either end's start-up. The server
 * runs this before it listens, the controller before it connects.
 */
final class HandshakeWarmup {
    private HandshakeWarmup() {
    }

    static void run(Auth auth) throws ControlProtocolException {
        String nonce = Auth.nonce();
        Request hello = Codec.read(Codec.tree(Codec.encode(new Request.Hello(Codec.VERSION, nonce))), Request.class);
        String proof = auth.serverProof(nonce, nonce);
        Reply challenge = Codec.reply(Codec.encode(new Reply.Challenge(Codec.VERSION, nonce, proof)));
        Request answer = Codec.request(Codec.encode(new Request.Authenticate(auth.clientProof(nonce, nonce))));
        byte[] key = auth.sessionKey(nonce, nonce);
        Auth.frameKey(key, "client");
        Auth.frameKey(key, "server");
        Codec.reply(Codec.encode(new Reply.Welcome(ServerLimits.DEFAULTS)));
        if (!(hello instanceof Request.Hello) || !(challenge instanceof Reply.Challenge c)
            || !(answer instanceof Request.Authenticate) || !Auth.verify(proof, c.proof())) {
            throw new IllegalStateException("the handshake's own messages do not read back"); // a bug, not a peer
        }
    }
}
