package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PeerTextTest {
    @Test
    void controlAndFormatCharactersBecomeQuestionMarksAndLengthIsBounded() {
        assertThat(PeerText.clean("plain text: ok (1.5 ms)")).isEqualTo("plain text: ok (1.5 ms)");
        assertThat(PeerText.clean("\u001b[2J\r\nx\u0000\u007f\u0085\u202e\u2028y")).isEqualTo("?[2J??x?????y");
        assertThat(PeerText.clean("é and ü stay")).isEqualTo("é and ü stay");
        assertThat(PeerText.clean(null)).isEmpty();
        String longText = "x".repeat(PeerText.MAX_CHARS + 50);
        assertThat(PeerText.clean(longText)).hasSize(PeerText.MAX_CHARS + 3).endsWith("...");
    }
}
