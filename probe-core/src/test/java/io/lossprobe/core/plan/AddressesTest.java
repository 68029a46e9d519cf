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
}
