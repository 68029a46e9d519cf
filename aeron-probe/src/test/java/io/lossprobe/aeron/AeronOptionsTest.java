package io.lossprobe.aeron;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.aeron.driver.ThreadingMode;
import io.lossprobe.core.accounting.FlowReceiver;
import io.lossprobe.core.plan.Level;
import io.lossprobe.core.plan.Plan;
import io.lossprobe.core.transport.ReceiverSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AeronOptionsTest {
    @Test
    void defaultsAreReliableOneMebibyteTermsAnd1408ByteMtu() {
        AeronOptions o = AeronOptions.parse(Map.of());
        assertThat(o.reliable()).isTrue();
        assertThat(o.termLengthBytes()).isEqualTo(1024 * 1024);
        assertThat(o.mtuBytes()).isEqualTo(1408);
        assertThat(o.aeronDir()).isNull();
        assertThat(o.publicationChannel("127.0.0.1", 43000, -7))
            .isEqualTo("aeron:udp?endpoint=127.0.0.1:43000|mtu=1408|term-length=1m|session-id=-7");
        assertThat(o.subscriptionChannel("127.0.0.1", 43000, 12))
            .isEqualTo("aeron:udp?endpoint=127.0.0.1:43000|session-id=12");
    }

    /**
     * A publication sending from a given address binds it through {@code control} (taken as given), not
     * {@code interface} (which must match an address a network interface lists: a loopback alias is refused).
     */
    @Test
    void aPublicationFromAGivenAddressBindsItAsItsControlAddress() {
        AeronOptions o = AeronOptions.parse(Map.of());
        assertThat(o.publicationChannel("127.0.0.1", 43000, -7, "127.0.0.5"))
            .isEqualTo("aeron:udp?endpoint=127.0.0.1:43000|control=127.0.0.5:0|mtu=1408|term-length=1m|session-id=-7");
        assertThat(o.publicationChannel("::1", 43000, 3, "::1"))
            .isEqualTo("aeron:udp?endpoint=[::1]:43000|control=[::1]:0|mtu=1408|term-length=1m|session-id=3");
        assertThat(o.publicationChannel("127.0.0.1", 43000, -7, null)).isEqualTo(o.publicationChannel("127.0.0.1",
            43000, -7));
    }

    /** What a controller waits beyond its control timeout for a server's senders: their connect waits. */
    @Test
    void theSendersOpeningTakesTheirConnectWaitsAtMost() {
        AeronTransport aeron = new AeronTransport();
        Map<String, String> options = Map.of("aeron.connectTimeoutMs", "3000");
        assertThat(aeron.senderOpenTimeoutMs(echoPlan(1, 43000, "127.0.0.1"), Map.of()))
            .as("echo: the requests' publications, then the replies' streams").isEqualTo(20_000);
        assertThat(aeron.senderOpenTimeoutMs(AeronRuns.plan(1, 43000, List.of("1k"), 100), options)).isEqualTo(3000);
    }

    @Test
    void unreliableModePutsReliableFalseOnTheSubscription() {
        AeronOptions o = AeronOptions.parse(Map.of("aeron.reliable", "false", "aeron.termLength", "64k"));
        assertThat(o.reliable()).isFalse();
        assertThat(o.termLengthBytes()).isEqualTo(64 * 1024);
        assertThat(o.subscriptionChannel("::1", 43000, 5))
            .isEqualTo("aeron:udp?endpoint=[::1]:43000|session-id=5|reliable=false");
    }

    @Test
    void aServeAttachesToAnExternalDriverByItsOwnSystemPropertyNeverByTheControllers() {
        assertThat(AeronOptions.DIR_OPTION.appliesOnServer()).isFalse();
        assertThat(AeronOptions.DIR_OPTION.systemProperty()).isEqualTo("lossprobe.aeron.dir");
        String before = System.getProperty("lossprobe.aeron.dir");
        System.setProperty("lossprobe.aeron.dir", "/dev/shm/hr-driver");
        try {
            assertThat(AeronOptions.parse(Map.of()).aeronDir()).isEqualTo("/dev/shm/hr-driver");
            assertThat(AeronOptions.parse(Map.of("aeron.dir", "/tmp/other")).aeronDir()).isEqualTo("/tmp/other");
        } finally {
            if (before == null) {
                System.clearProperty("lossprobe.aeron.dir");
            } else {
                System.setProperty("lossprobe.aeron.dir", before);
            }
        }
    }

    @Test
    void threadingFollowsTheCoreCount() {
        assertThat(AeronOptions.threadingFor(2)).isEqualTo(ThreadingMode.SHARED);
        assertThat(AeronOptions.threadingFor(4)).isEqualTo(ThreadingMode.SHARED_NETWORK);
        assertThat(AeronOptions.threadingFor(16)).isEqualTo(ThreadingMode.DEDICATED);
        assertThat(AeronOptions.parse(Map.of("aeron.threading", "dedicated")).threading())
            .isEqualTo(ThreadingMode.DEDICATED);
    }

    @Test
    void badValuesAreRejectedWithTheOptionName() {
        assertThatThrownBy(() -> AeronOptions.parse(Map.of("aeron.reliable", "yes")))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("aeron.reliable");
        assertThatThrownBy(() -> AeronOptions.parse(Map.of("aeron.termLength", "100k")))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("aeron.termLength");
        assertThatThrownBy(() -> AeronOptions.parse(Map.of("aeron.mtu", "1500")))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("aeron.mtu");
    }

    @Test
    void streamIdsMapBackToFlows() {
        assertThat(AeronOptions.flowOf(AeronOptions.streamId(7), 8)).isEqualTo(7);
        assertThat(AeronOptions.flowOf(AeronOptions.streamId(8), 8)).isEqualTo(-1);
        assertThat(AeronOptions.flowOf(1001, 8)).isEqualTo(-1);
    }

    @Test
    void echoRepliesUseTheNextPortsAndStreamsOfTheirOwn() {
        Plan plan = echoPlan(48, 40000, "127.0.0.1");
        assertThat(AeronOptions.replyPort(plan, 0)).isEqualTo(40048);
        assertThat(AeronOptions.replyPort(plan, 47)).isEqualTo(40095);
        assertThat(AeronOptions.flowOf(AeronOptions.replyStreamId(3), 8)).as("not a request stream").isEqualTo(-1);
        assertThat(AeronOptions.flowOf(AeronOptions.replyStreamId(3), AeronOptions.REPLY_STREAM_ID_BASE, 8))
            .isEqualTo(3);
        AeronOptions.checkReplyPorts(echoPlan(8, 65520, "127.0.0.1"));
        assertThatThrownBy(() -> AeronOptions.checkReplyPorts(echoPlan(8, 65521, "127.0.0.1")))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("65536");
    }

    @Test
    void repliesGoToTheEchoHostOrElseTheBindAddressOnThisHost() {
        FlowReceiver[] none = new FlowReceiver[0];
        assertThat(AeronReceiver.replyHost(new ReceiverSpec(echoPlan(1, 43000, "127.0.0.1"), "127.0.0.1", none,
            Map.of(), "10.1.2.3", null))).isEqualTo("10.1.2.3");
        assertThat(AeronReceiver.replyHost(new ReceiverSpec(echoPlan(1, 43000, "127.0.0.1"), "127.0.0.1", none,
            Map.of(), null, null))).isEqualTo("127.0.0.1");
        assertThat(AeronReceiver.replyHost(new ReceiverSpec(echoPlan(1, 43000, "0.0.0.0"), "0.0.0.0", none,
            Map.of(), null, null))).isEqualTo("127.0.0.1");
        assertThat(AeronSender.localAddressTowards("127.0.0.1")).isEqualTo("127.0.0.1");
    }

    private static Plan echoPlan(int ports, int basePort, String bind) {
        return new Plan(List.of("aeron"), ports, basePort, List.of(Level.parse("1k")), 1_000_000_000L, 0,
            1_000_000_000L, 64, bind, Plan.ECHO, 0);
    }

    /** Aeron multicast: the group's rules (a literal, multicast, not a control group, last byte odd) and channels. */
    @Test
    void aMulticastGroupIsAnOddMulticastLiteralAndGivesGroupChannels() {
        for (String bad : List.of("239.255.0.2", "ff15::2", "198.18.0.1", "224.0.0.251", "ff02::1", "group.example",
            "999.1.1.1")) {
            assertThatThrownBy(() -> AeronOptions.parse(Map.of("aeron.group", bad))).as(bad)
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("aeron.group");
        }
        assertThatThrownBy(() -> Multicast.parseGroup("239.255.0.4")).hasMessage("aeron.group 239.255.0.4: Aeron's "
            + "multicast data group ends in an odd byte (its status messages and NAKs go to the next address, the "
            + "control group): e.g. 239.255.0.5");
        AeronOptions o = AeronOptions.parse(Map.of("aeron.group", "239.255.0.1", "aeron.ttl", "2",
            "aeron.flowControl", "min", "aeron.reliable", "false"));
        assertThat(o.multicast().controlGroup()).isEqualTo("239.255.0.2");
        assertThat(o.publicationChannel("239.255.0.1", 43000, 5, "198.18.0.11")).isEqualTo("aeron:udp?endpoint="
            + "239.255.0.1:43000|interface=198.18.0.11|mtu=1408|term-length=1m|session-id=5|ttl=2|fc=min");
        assertThat(o.subscriptionChannel("198.18.0.101", 43000, 5))
            .isEqualTo("aeron:udp?endpoint=239.255.0.1:43000|interface=198.18.0.101|session-id=5|reliable=false");
        assertThatThrownBy(() -> o.subscriptionChannel("0.0.0.0", 43000, 5))
            .hasMessageContaining("give serve --bind an address of that interface");
        AeronOptions tagged = AeronOptions.parse(Map.of("aeron.group", "ff15::1", "aeron.flowControl", "tagged",
            "aeron.groupTag", "7"));
        assertThat(tagged.multicast().controlGroup()).isEqualTo("ff15:0:0:0:0:0:0:2");
        assertThat(tagged.multicast().fc()).isEqualTo("tagged,g:7");
        assertThat(tagged.subscriptionChannel("2001:2::101", 43000, 5)).contains("gtag=7");
        assertThatThrownBy(() -> AeronOptions.parse(Map.of("aeron.group", "239.255.0.1", "aeron.flowControl",
            "tagged"))).hasMessageContaining("needs the receivers' group tag");
        assertThatThrownBy(() -> AeronOptions.parse(Map.of("aeron.ttl", "2")))
            .hasMessageStartingWith("aeron.ttl goes with a multicast group");
    }

    /** Multi-destination-cast: its rules and channels (a control socket per flow on the sender, no group). */
    @Test
    void multiDestinationCastGivesDynamicControlChannels() {
        AeronOptions o = AeronOptions.parse(Map.of("aeron.mdc", "198.18.0.11", "aeron.flowControl", "min",
            "aeron.mdcReceivers", "198.18.0.101, 198.18.0.102"));
        assertThat(o.multicast().mdc()).isTrue();
        assertThat(o.multicast().mdcReceivers()).extracting(java.net.InetAddress::getHostAddress)
            .containsExactly("198.18.0.101", "198.18.0.102");
        assertThat(o.publicationChannel("198.18.0.101", 43000, 5)).isEqualTo("aeron:udp?control=198.18.0.11:43000"
            + "|control-mode=dynamic|mtu=1408|term-length=1m|session-id=5|fc=min");
        assertThat(o.subscriptionChannel("198.18.0.101", 43000, 5))
            .isEqualTo("aeron:udp?endpoint=198.18.0.101:43000|control=198.18.0.11:43000|session-id=5");
        assertThatThrownBy(() -> o.subscriptionChannel("0.0.0.0", 43000, 5))
            .hasMessageContaining("multi-destination-cast receiver sends its status messages from its bind address");
        assertThat(new AeronTransport().reliable(Map.of("aeron.mdc", "198.18.0.11"))).as("max: may leave one behind")
            .isFalse();
        assertThat(new AeronTransport().reliable(Map.of("aeron.mdc", "198.18.0.11", "aeron.flowControl", "min")))
            .isTrue();
        for (Map<String, String> bad : List.of(Map.of("aeron.mdc", "239.255.0.1"), Map.of("aeron.mdc", "0.0.0.0"),
            Map.of("aeron.mdc", "sender.example"), Map.of("aeron.mdc", "198.18.0.11", "aeron.group", "239.255.0.1"),
            Map.of("aeron.mdc", "198.18.0.11", "aeron.ttl", "2"), Map.of("aeron.mdcReceivers", "198.18.0.101"),
            Map.of("aeron.mdc", "198.18.0.11", "aeron.mdcReceivers", "198.18.0.101,ff15::1"))) {
            assertThatThrownBy(() -> AeronOptions.parse(bad)).as(bad.toString())
                .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
