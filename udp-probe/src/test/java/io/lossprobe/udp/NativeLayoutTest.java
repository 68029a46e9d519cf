package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The meta buffer's layout is declared in lossprobe_udp.c and mirrored in {@link NativeUdp}, the send table's in
 * lossprobe_udp.h and mirrored in {@link NativeBatchSender}: every constant the compiled library lists
 * ({@code layout0}) has Java's value under Java's name, and every record, sample or entry offset Java declares
 * ({@code META_*}, {@code SAMPLE_*}, {@code ENTRY_*}) is one the library lists.
 */
class NativeLayoutTest {
    @Test
    void javasMirrorsOfTheMetaBufferAndTheSendTableAreTheLibrarysLayout() throws Exception {
        assumeTrue(NativeUdp.class.getResource(NativeUdp.RESOURCE) != null, "built without the native piece");
        assertThat(NativeUdp.available()).as(String.valueOf(NativeUdp.unavailableBecause())).isTrue();
        Map<String, Long> c = new TreeMap<>();
        for (String entry : NativeUdp.layout0().split(",")) {
            String[] nameValue = entry.split("=");
            c.put(nameValue[0], Long.parseLong(nameValue[1]));
        }
        Map<String, Long> java = new TreeMap<>();
        for (Class<?> mirror : List.of(NativeUdp.class, NativeBatchSender.class)) {
            for (Field f : mirror.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) && c.containsKey(f.getName())) {
                    assertThat(java.put(f.getName(), ((Number) f.get(null)).longValue())).as(f.getName()).isNull();
                }
            }
        }
        assertThat(java).as("the library's constants as Java declares them").isEqualTo(c);
        for (Field f : NativeUdp.class.getDeclaredFields()) {
            if (f.getName().startsWith("META_") || f.getName().startsWith("SAMPLE_")) {
                assertThat(c).as("Java's %s is declared in lossprobe_udp.c", f.getName()).containsKey(f.getName());
            }
        }
        for (Field f : NativeBatchSender.class.getDeclaredFields()) {
            if (f.getName().startsWith("ENTRY_")) {
                assertThat(c).as("Java's %s is declared in lossprobe_udp.h", f.getName()).containsKey(f.getName());
            }
        }
        assertThat(c.get("ENTRY_BYTES")).as("an entry holds its five ints")
            .isGreaterThanOrEqualTo(c.get("ENTRY_RESULT") + Integer.BYTES);
        assertThat(c.get("META_BUFFER_BYTES")).as("the records, then the two samples")
            .isEqualTo(c.get("MAX_BATCH") * c.get("META_BYTES") + 2 * c.get("SAMPLE_BYTES"));
    }
}
