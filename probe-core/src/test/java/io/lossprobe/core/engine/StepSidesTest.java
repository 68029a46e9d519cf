package io.lossprobe.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How a pass's sides are combined and closed. */
class StepSidesTest {
    @Test
    void perFlowCountsAreSummedOverTheSides() {
        assertThat(StepSides.perFlow(List.of(new long[] {1, 2, 3}, new long[] {10, 20, 30})))
            .containsExactly(11, 22, 33);
        long[] one = {4, 5};
        assertThat(StepSides.perFlow(List.of(one))).isSameAs(one);
        assertThatThrownBy(() -> StepSides.perFlow(List.of(new long[2], new long[3])))
            .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aResultIsBuiltFromOneSidesPartsOnly() {
        assertThat(StepSides.single(List.of("a"), "receipt")).isEqualTo("a");
        assertThatThrownBy(() -> StepSides.single(List.of("a", "b"), "receipt"))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("one receipt, not 2");
    }

    @Test
    void theSendersCloseBeforeTheReceiversAndAFailingCloseStopsNoOther() throws Exception {
        List<String> closed = new ArrayList<>();
        ReceiveSide receiver = side(ReceiveSide.class, "receiver", closed, null);
        SendSide sender = side(SendSide.class, "sender", closed, new IllegalStateException("sender close"));
        StepSides sides = StepSides.open((t, p, r, a, o) -> receiver, (t, p, r, a, o) -> sender, null, null, 1,
            null, Map.of());
        assertThat(sides.receivers()).containsExactly(receiver);
        assertThat(sides.senders()).containsExactly(sender);
        assertThatThrownBy(sides::close).hasMessage("sender close");
        assertThat(closed).containsExactly("sender reached", "sender", "receiver");
    }

    @Test
    void theReceiversCloseWhenTheSendersFailToOpen() {
        List<String> closed = new ArrayList<>();
        ReceiveSide receiver = side(ReceiveSide.class, "receiver", closed, new IllegalStateException("rx close"));
        assertThatThrownBy(() -> StepSides.open((t, p, r, a, o) -> receiver, (t, p, r, a, o) -> {
            throw new IllegalStateException("no senders");
        }, null, null, 1, null, Map.of())).hasMessage("no senders").satisfies(e ->
            assertThat(e.getSuppressed()).extracting(Throwable::getMessage).containsExactly("rx close"));
        assertThat(closed).containsExactly("receiver");
    }

    /**
     * A side whose close and reachFrom are recorded (close throws {@code onClose} when given); nothing else is called.
     */
    private static <S> S side(Class<S> type, String name, List<String> closed, RuntimeException onClose) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
            switch (m.getName()) {
                case "close" -> {
                    closed.add(name);
                    if (onClose != null) {
                        throw onClose;
                    }
                    return null;
                }
                case "toString" -> {
                    return name;
                }
                case "reachFrom" -> {
                    closed.add(name + " reached");
                    return null;
                }
                case "hashCode" -> {
                    return System.identityHashCode(proxy);
                }
                case "equals" -> {
                    return proxy == args[0];
                }
                default -> throw new UnsupportedOperationException(m.getName());
            }
        }));
    }
}
