package io.lossprobe.core.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AddressesTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "::1|7400|[::1]:7400",
        "[::1]|7400|[::1]:7400",
        "2001:2:0:0:0:0:0:11|52600|[2001:2::11]:52600",
        "2001:DB8:0:0:1:0:0:1|1|[2001:db8::1:0:0:1]:1",
        "198.18.0.1|7400|198.18.0.1:7400",
        "rx.example|7400|rx.example:7400",
        "::ffff:198.18.0.1|7400|198.18.0.1:7400",
    })
    void hostPortBracketsAndShortensIpv6Only(String host, int port, String expected) {
        assertThat(Addresses.hostPort(host, port)).isEqualTo(expected);
    }

    /** RFC 5952 section 4: leading zeros go, the longest run of zero groups (the first of equals) becomes "::". */
    @ParameterizedTest
    @CsvSource({
        "2001:0db8:0000:0000:0000:0000:0002:0001, 2001:db8::2:1",
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
        "2001:0:0:1:0:0:0:1, 2001:0:0:1::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "0:0:0:0:0:0:0:0, ::",
        "1:0:0:0:0:0:0:0, 1::",
        "0:0:0:0:0:0:0:1, ::1",
    })
    void ipv6IsWrittenInItsShortForm(String literal, String expected) throws Exception {
        assertThat(Addresses.text(InetAddress.getByName(literal))).isEqualTo(expected);
        assertThat(Addresses.text(literal)).isEqualTo(expected);
    }

    @Test
    void aScopeIsKept() throws Exception {
        assertThat(Addresses.text("fe80:0:0:0:0:0:0:1%1")).isEqualTo("fe80::1%1");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"239.255.0.1|/239.255.0.1", "0.0.0.0|/0.0.0.0",
        "255.255.255.255|/255.255.255.255", "198.18.0.11|/198.18.0.11", "ff15::1|/ff15:0:0:0:0:0:0:1",
        "::1|/0:0:0:0:0:0:0:1", "::ffff:198.18.0.1|/198.18.0.1"})
    void aLiteralIsParsed(String text, String parsed) {
        assertThat(Addresses.literal(text)).hasToString(parsed);
    }

    /**
     * What is no literal is null, never handed to a resolver: InetAddress takes {@code 999.1.1.1} or
     * {@code 010.1.1.1} for a host name and asks DNS for it.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"999.1.1.1", "256.0.0.1", "010.1.1.1", "1.2.3",
        "1.2.3.4.5", "localhost", "rx.example", "", " 239.255.0.1", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", "[::1]"})
    void whatIsNoLiteralIsNull(String text) {
        assertThat(Addresses.literal(text)).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"224.0.0.1|true", "224.0.0.251|true", "ff02::1|true", "ff01::1|true",
        "ff12::1|true", "224.0.1.1|false", "239.255.0.1|false", "ff05::1:3|false", "ff15::1|false"})
    void theLocalNetworksControlGroupsAreKnown(String group, boolean control) {
        assertThat(Addresses.controlGroup(Addresses.literal(group))).isEqualTo(control);
    }
}
