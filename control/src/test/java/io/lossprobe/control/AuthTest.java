package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.wire.MessageAuth;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class AuthTest {
    @Test
    void secretsShorterThan16BytesAreRefused() {
        assertThatThrownBy(() -> Auth.ofSecret("fifteen bytes!!")).hasMessage("the shared secret is 15 bytes; at "
            + "least 16 are needed: make one with 'lossprobe keygen FILE'");
        Auth.ofSecret("  sixteen bytes!!! \n"); // surrounding whitespace is not the secret
    }

    /**
     * Roles and directions never share a value: a server's proof is not a controller's, a frame key of one
     * direction is not the other's, and the session key is as before, so the data key (MessageAuth.derive) is too.
     */
    @Test
    void proofsAndKeysAreDistinctPerRoleAndDirection() {
        Auth auth = Auth.ofSecret("correct horse battery staple");
        String c = "clientNonceclientNonce==";
        String s = "serverNonceserverNonce==";
        assertThat(auth.serverProof(c, s)).isNotEqualTo(auth.clientProof(c, s));
        assertThat(auth.serverProof(c, s)).isNotEqualTo(auth.serverProof(s, c));
        byte[] session = auth.sessionKey(c, s);
        assertThat(Auth.frameKey(session, "client")).isNotEqualTo(Auth.frameKey(session, "server"));
        // HMAC-SHA256(secret, "lossprobe-v1|session|c|s"), unchanged from protocol 1.
        assertThat(HexFormat.of().formatHex(session))
            .isEqualTo(HexFormat.of().formatHex(hmac("correct horse battery staple", "lossprobe-v1|session|" + c
                + "|" + s)));
        assertThat(MessageAuth.derive(session, 7)).isNotNull();
        assertThat(Auth.ofSecret("another secret, same nonces").sessionKey(c, s)).isNotEqualTo(session);
    }

    private static byte[] hmac(String key, String label) {
        try {
            javax.crypto.Mac m = javax.crypto.Mac.getInstance("HmacSHA256");
            m.init(new javax.crypto.spec.SecretKeySpec(key.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                "HmacSHA256"));
            return m.doFinal(label.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void nothingToWarnAboutForAKeygenSecretInAPrivateFile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
        throws Exception {
        java.nio.file.Path file = dir.resolve("s");
        Auth.writeNewSecret(file);
        List<String> warnings = new ArrayList<>();
        Auth.load(file, warnings::add);
        assertThat(warnings).isEmpty();
    }
}
