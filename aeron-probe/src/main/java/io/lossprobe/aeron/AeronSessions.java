package io.lossprobe.aeron;

import io.lossprobe.core.wire.MessageAuth;

/**
 * Which Aeron session is a flow's own. Aeron's frames (SETUP, data, status messages, NAKs) carry no tag, so a
 * spoofer that uses the controller's address can open sessions of its own on a flow's stream. Every publication of
 * a pass is therefore given a session id both ends derive from the pass's key (which never travels): the sender
 * publishes with it, the receiver subscribes to that session only, and anything else on the stream is foreign. No
 * control message carries it; a spoofer off the path cannot guess it (one on the path reads it in the frames, and
 * can then do no more than drop a message, which it could anyway: docs/aeron.md, "Spoofed Aeron frames").
 */
final class AeronSessions {
    private AeronSessions() {
    }

    /** The session of flow {@code flow}'s requests (the stream mode's data). */
    static int request(MessageAuth passKey, int flow) {
        return passKey.derivedInt("aeron request session", flow);
    }

    /** Echo mode: the session of flow {@code flow}'s replies. */
    static int reply(MessageAuth passKey, int flow) {
        return passKey.derivedInt("aeron reply session", flow);
    }
}
