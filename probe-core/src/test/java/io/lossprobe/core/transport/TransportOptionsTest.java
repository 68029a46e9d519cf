package io.lossprobe.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TransportOptionsTest {
    static final TransportOption<Boolean> NODELAY = TransportOption.bool("t.nodelay", true, "nagle off");
    static final TransportOption<Integer> BUF = TransportOption.bytes("rcvbuf", 4 << 20, "4MiB", 1, 1 << 30, "buffer");
    static final TransportOption<String> DIR = TransportOption.text("t.dir", "none", "a path").localOnly();
    static final TransportOption<String> MODE = TransportOption.choice("t.mode", "auto", "mode", "auto", "on", "off")
        .withSystemProperty();
    static final TransportOption<Long> MTU = TransportOption.number("t.mtu", 1408, 64, 65504, "mtu")
        .requiring(v -> v % 32 == 0, "a multiple of 32");

    static Transport declaring(String name, TransportOption<?>... options) {
        return new Transport() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public List<TransportOption<?>> options() {
                return List.of(options);
            }

            @Override
            public ReceiverEndpoint openReceiver(ReceiverSpec spec) {
                throw new UnsupportedOperationException();
            }

            @Override
            public SenderEndpoint openSender(SenderSpec spec) {
                throw new UnsupportedOperationException();
            }
        };
    }

    static final Transport T = declaring("t", NODELAY, BUF, DIR, MODE, MTU);
    static final Transport U = declaring("u", BUF, TransportOption.bytes("rcvbuf", null, "autotuning", 1024, 1 << 20,
        "a narrower buffer"));

    @Test
    void anUnknownKeyIsRefusedWithTheKnownKeysAndTheLikeliestOne() {
        assertThatThrownBy(() -> TransportOptions.validate(Map.of("t.nodealy", "true"), List.of(T)))
            .hasMessage("unknown transport option 't.nodealy' (did you mean t.nodelay?); known: rcvbuf, t.dir, "
                + "t.mode, t.mtu, t.nodelay");
        assertThatThrownBy(() -> TransportOptions.validate(Map.of("completely.else", "1"), List.of(T)))
            .hasMessageStartingWith("unknown transport option 'completely.else'; known:");
        assertThat(TransportOptions.suggest("T.MODE", List.of("t.mode", "t.mtu"))).isEqualTo("t.mode");
    }

    @Test
    void aBadValueIsRefusedByEveryDeclarationOfItsKey() {
        assertThatThrownBy(() -> TransportOptions.validate(Map.of("t.nodelay", "maybe"), List.of(T)))
            .hasMessage("-X t.nodelay=maybe: t.nodelay must be true or false, not 'maybe'");
        assertThatThrownBy(() -> TransportOptions.validate(Map.of("t.mtu", "1500"), List.of(T)))
            .hasMessage("-X t.mtu=1500: t.mtu must be a multiple of 32, not '1500'");
        assertThatThrownBy(() -> TransportOptions.validate(Map.of("t.mtu", "99999"), List.of(T)))
            .hasMessageContaining("t.mtu must be 64 to 65504");
        // Valid for t's rcvbuf, too large for u's: refused, since u would read it too.
        TransportOptions.validate(Map.of("rcvbuf", "4MiB"), List.of(T));
        assertThatThrownBy(() -> TransportOptions.validate(Map.of("rcvbuf", "4MiB"), List.of(T, U)))
            .hasMessageContaining("rcvbuf must be 1KiB to 1MiB");
    }

    @Test
    void valuesAreReadThroughTheDeclarationInEveryFormItTakes() {
        assertThat(BUF.read(Map.of("rcvbuf", "4MiB"))).isEqualTo(4 << 20);
        assertThat(BUF.read(Map.of("rcvbuf", "65536"))).isEqualTo(65536);
        assertThat(BUF.read(Map.of())).isEqualTo(4 << 20);
        assertThat(MODE.read(Map.of("t.mode", "ON"))).isEqualTo("on");
        assertThat(NODELAY.read(Map.of("t.nodelay", "False"))).isFalse();
        assertThat(DIR.read(Map.of())).isNull();
    }

    @Test
    void aSystemPropertySetsTheDefaultAndIsCheckedToo() {
        System.setProperty("lossprobe.t.mode", "off");
        try {
            assertThat(MODE.read(Map.of())).isEqualTo("off");
            assertThat(MODE.read(Map.of("t.mode", "on"))).isEqualTo("on");
            System.setProperty("lossprobe.t.mode", "sometimes");
            assertThatThrownBy(() -> TransportOptions.validate(Map.of(), List.of(T)))
                .hasMessage("-Dlossprobe.t.mode: t.mode must be one of auto, on, off, not 'sometimes'");
        } finally {
            System.clearProperty("lossprobe.t.mode");
        }
    }

    @Test
    void exactlyTheServerSideOptionsOfTheRunsTransportsTravel() {
        Map<String, String> options = Map.of("t.nodelay", "false", "t.dir", "/dev/shm/x", "rcvbuf", "1MiB",
            "v.other", "1");
        assertThat(TransportOptions.forServer(options, List.of(T)))
            .isEqualTo(Map.of("t.nodelay", "false", "rcvbuf", "1MiB"));
        assertThat(TransportOptions.forServer(options, List.of(U))).isEqualTo(Map.of("rcvbuf", "1MiB"));
        TransportOptions.validateOnServer(Map.of("t.nodelay", "false", "rcvbuf", "1MiB"), List.of(T));
        assertThatThrownBy(() -> TransportOptions.validateOnServer(Map.of("t.dir", "/etc"), List.of(T)))
            .hasMessage("transport option 't.dir' applies on the controller's host only; a server does not take it");
        assertThatThrownBy(() -> TransportOptions.validateOnServer(Map.of("x", "1"), List.of(T)))
            .hasMessageStartingWith("unknown transport option 'x'");
    }

    @Test
    void keysForATransportTheRunDoesNotUseAreReportedNotRefused() {
        TransportOptions.validate(Map.of("t.nodelay", "false"), List.of(T, U));
        assertThat(TransportOptions.unused(Map.of("t.nodelay", "false", "rcvbuf", "1"), List.of(U)))
            .containsExactly("t.nodelay");
    }
}
