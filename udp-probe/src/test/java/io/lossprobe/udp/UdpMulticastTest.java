package io.lossprobe.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The multicast options' refusals, which a server applies to what a controller sends it: only a multicast address
 * literal is a group (a name is never looked up), and the native send path is left for settings it cannot make.
 * Multicast traffic itself is tested only inside the lab's namespaces (MulticastLabSystemTest), never here.
 */
class UdpMulticastTest {
    @ParameterizedTest
    @ValueSource(strings = {"239.255.0.1", "224.0.1.1", "ff15::1", "ff05::1:3", " 239.255.7.7 "})
    void aMulticastLiteralIsAGroup(String group) {
        assertThat(UdpMulticast.GROUP.parse(group)).isEqualTo(group.strip());
        assertThat(UdpMulticast.group(Map.of("udp.group", group)).isMulticastAddress()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"198.18.0.1", "127.0.0.1", "2001:2::1", "::1"})
    void aUnicastAddressIsRefusedAsNotMulticast(String address) {
        assertThatThrownBy(() -> UdpMulticast.GROUP.parse(address)).isInstanceOf(IllegalArgumentException.class)
            .hasMessage("udp.group " + address + " is not a multicast address (IPv4 224.0.0.0/4, IPv6 ff00::/8; for "
                + "a test 239.255.0.0/16 or ff15::/16)");
    }

    @ParameterizedTest
    @ValueSource(strings = {"224.0.0.1", "224.0.0.5", "224.0.0.251", "ff02::1", "ff02::fb", "ff01::1", "ff12::1"})
    void aLinkLocalControlGroupIsRefused(String group) {
        assertThatThrownBy(() -> UdpMulticast.GROUP.parse(group)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("udp.group " + group + " is a link-local control group (224.0.0.0/24, ");
    }

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "group.example", "239.255.0", "239.255.0.1.2", "", "1:2:3:4:5:6:7:8:9"})
    void aNameOrABrokenAddressIsRefusedUnresolved(String text) {
        assertThatThrownBy(() -> UdpMulticast.GROUP.parse(text)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("udp.group must be");
    }

    @ParameterizedTest
    @ValueSource(strings = {"239.255.0.1", "0.0.0.0", "::", "tx1", "198.18.0"})
    void aSourceIsOneUnicastLiteral(String text) {
        assertThatThrownBy(() -> UdpMulticast.SOURCE.parse(text)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageStartingWith("udp.source must be the sender's unicast address literal");
    }

    @Test
    void aSourceSpecificRunNamesItsSource() {
        assertThat(UdpMulticast.source(Map.of("udp.source", "198.18.0.11")).getHostAddress()).isEqualTo("198.18.0.11");
        assertThat(UdpMulticast.source(Map.of())).isNull();
    }

    @Test
    void unicastRunsHaveNoGroup() {
        assertThat(UdpMulticast.group(Map.of())).isNull();
        assertThat(UdpSender.multicastNeedsNetty(Map.of("udp.ttl", "5"))).isFalse();
    }

    @Test
    void onlyTheKernelsDefaultsGoTheNativeWay() {
        assertThat(UdpSender.multicastNeedsNetty(Map.of("udp.group", "239.255.0.1"))).isFalse();
        assertThat(UdpSender.multicastNeedsNetty(Map.of("udp.group", "239.255.0.1", "udp.ttl", "2"))).isTrue();
        assertThat(UdpSender.multicastNeedsNetty(Map.of("udp.group", "239.255.0.1", "udp.interface", "eth0")))
            .isTrue();
    }

    @Test
    void theInterfaceIsThisHostsOwnAndNeverForwardedToAServer() {
        assertThat(UdpMulticast.INTERFACE.appliesOnServer()).isFalse();
        assertThat(UdpMulticast.GROUP.appliesOnServer()).isTrue();
        assertThat(UdpMulticast.TTL.read(Map.of())).isEqualTo(1L);
    }
}
