package io.lossprobe.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lossprobe.core.result.Cpu;
import io.lossprobe.core.result.LossBurst;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Typed messages on the wire: round trips, and everything a strict decoder must refuse. */
class CodecTest {
    private static Request request(String json) throws ControlProtocolException {
        return Codec.request(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void everyMessageSaysItsTypeAndComesBackTheSame() throws Exception {
        Request r = new Request.CloseStep(3, new long[] {1, 2}, Map.of(1, new long[] {4, 6}));
        String json = new String(Codec.encode(r), StandardCharsets.UTF_8);
        assertThat(json).startsWith("{\"type\":\"close-step\",");
        Request.CloseStep back = (Request.CloseStep) Codec.request(Codec.encode(r));
        assertThat(back.step()).isEqualTo(3);
        assertThat(back.wireEnd()).containsExactly(1, 2);
        assertThat(back.failed().get(1)).containsExactly(4, 6);
        assertThat(Codec.request(Codec.encode(new Request.Bye()))).isInstanceOf(Request.Bye.class);

        Reply.StepResult result = new Reply.StepResult(List.of(), Map.of("a.b", 1L), Map.of(0, Map.of("x", 2L)),
            List.of("a note"), null, new Cpu(1.5, 2.5), null);
        Reply.StepResult got = (Reply.StepResult) Codec.reply(Codec.encode(result));
        assertThat(got.flowCounters()).isEqualTo(Map.of(0, Map.of("x", 2L)));
        assertThat(got.hostCounters()).isNull();
        assertThat(got.cpu()).isEqualTo(new Cpu(1.5, 2.5));
        assertThat(Codec.typeOf(result)).isEqualTo("step-result");
    }

    @Test
    void thePlanCarriesItsPatternAndSeedToTheServer() throws Exception {
        io.lossprobe.core.plan.Plan plan = new io.lossprobe.core.plan.Plan(List.of("udp"), 2, 40000,
            List.of(io.lossprobe.core.plan.Level.parse("12.8k")), 1_000_000_000L, 0, 1_000_000_000L, 64,
            "127.0.0.1").withPattern("burst:64/10ms", -5);
        String json = new String(Codec.encode(new Request.PlanRequest(3, plan)), StandardCharsets.UTF_8);
        assertThat(json).contains("\"pattern\":\"burst:64/10ms\"", "\"seed\":-5");
        Request.PlanRequest back = (Request.PlanRequest) Codec.request(json.getBytes(StandardCharsets.UTF_8));
        assertThat(back.plan()).isEqualTo(plan);
        assertThat(back.plan().sendPattern().burst()).isEqualTo(64);
        // A version-4 controller's plan has no pattern: the strict decoder refuses it rather than guess constant.
        String older = json.replace(",\"pattern\":\"burst:64/10ms\",\"seed\":-5", "");
        assertThat(older).doesNotContain("pattern");
        assertThatThrownBy(() -> request(older)).isInstanceOf(ControlProtocolException.class);
    }

    @Test
    void theNatExchangeComesBackTheSameAndChecksItsRanges() throws Exception {
        Request.OpenSender open = (Request.OpenSender) Codec.request(Codec.encode(
            new Request.OpenSender("udp", "192.168.1.20")));
        assertThat(open.address()).isEqualTo("192.168.1.20");
        assertThat(Codec.request(Codec.encode(new Request.Punched()))).isInstanceOf(Request.Punched.class);
        Reply.SenderReady ready = (Reply.SenderReady) Codec.reply(Codec.encode(
            new Reply.SenderReady(Map.of("udp.x", 1L), new int[] {40001, 40002}, "198.18.0.250")));
        assertThat(ready.sourcePorts()).containsExactly(40001, 40002);
        assertThat(ready.observed()).isEqualTo("198.18.0.250");
        assertThat(((Reply.Punches) Codec.reply(Codec.encode(new Reply.Punches(new int[] {3})))).missing())
            .containsExactly(3);
        String[][] bad = {
            {"{\"type\":\"open-sender\",\"transport\":\"udp\"}", "missing field 'address'"},
            {"{\"type\":\"open-sender\",\"transport\":\"udp\",\"address\":\"a b\"}", "must be an address"},
            {"{\"type\":\"punched\",\"flows\":[1]}", "unknown field 'flows'"},
        };
        for (String[] b : bad) {
            assertThatThrownBy(() -> request(b[0])).as(b[0]).isInstanceOf(ControlProtocolException.class)
                .hasMessageContaining(b[1]);
        }
        String[] badReplies = {
            "{\"type\":\"sender-ready\",\"environment\":{},\"sourcePorts\":[0],\"observed\":\"1.2.3.4\"}",
            "{\"type\":\"sender-ready\",\"environment\":{},\"sourcePorts\":[65536],\"observed\":\"1.2.3.4\"}",
            "{\"type\":\"sender-ready\",\"environment\":{},\"sourcePorts\":[1],\"observed\":\"\"}",
            "{\"type\":\"punches\",\"missing\":[-1]}",
        };
        for (String b : badReplies) {
            assertThatThrownBy(() -> Codec.reply(b.getBytes(StandardCharsets.UTF_8))).as(b)
                .isInstanceOf(ControlProtocolException.class);
        }
    }

    @Test
    void looseJsonIsRefused() {
        String[][] bad = {
            {"{\"type\":\"clock\",\"seq\":\"1\"}", "bad message"},
            {"{\"type\":\"clock\",\"seq\":1.5}", "bad message"},
            {"{\"type\":\"clock\",\"seq\":null}", "bad message"},
            {"{\"type\":\"clock\"}", "bad message: missing field 'seq'"},
            {"{\"type\":\"clock\",\"seq\":1,\"seq\":2}", "Duplicate field 'seq'"},
            {"{\"type\":\"clock\",\"seq\":1,\"t\":0}", "bad message: unknown field 't'"},
            {"{\"type\":\"clock\",\"seq\":-1}", "field 'seq' must be at least 0"},
            {"{\"type\":\"clock\",\"seq\":1} {}", "bad message"},
            {"{\"type\":\"teleport\"}", "unknown message type 'teleport'"},
            {"{\"seq\":1}", "no message type"},
            {"{\"type\":\"progress\",\"failed\":{\"x\":[1,2]}}", "bad message"},
            {"{\"type\":\"progress\",\"failed\":" + "[".repeat(40) + "]".repeat(40) + "}", "bad message"},
            {"{\"type\":\"open\",\"transport\":\"UDP; rm -rf\",\"messageSize\":64,\"source\":null}",
                "field 'transport' must be a transport name"},
        };
        for (String[] b : bad) {
            assertThatThrownBy(() -> request(b[0])).as(b[0]).isInstanceOf(ControlProtocolException.class)
                .hasMessageContaining(b[1]);
        }
    }

    @Test
    void peerTextInARefusalIsMadeSafe() {
        assertThatThrownBy(() -> request("{\"type\":\"\\u001b[31mred\"}"))
            .hasMessage("bad message: unknown message type '?[31mred'");
        Reply.Failure f = new Reply.Failure(2, "a\u001b]0;x\u0007b\nc");
        assertThat(f.message()).isEqualTo("a?]0;x?b?c");
        assertThatThrownBy(() -> new Reply.Ready(Map.of("bad\u001b[2Jkey", 1L))).hasMessageContaining("environment");
        assertThat(new Reply.Ready(Map.of("a key with spaces", 1L)).environment()).containsKey("a key with spaces");
        assertThat(new Reply.StepResult(List.of(), Map.of(), Map.of(), List.of("x\u001b[2Jy"), null,
                null, null).notes())
            .containsExactly("x?[2Jy");
        assertThatThrownBy(() -> new Reply.FlowSummary(0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, LossBurst.NONE, "",
                null, "", null,
            "", 0, 0, 0, null, null, null)).hasMessageContaining("at least 0");
        // A size mix's per-size counts from a server must add up to what it says it received.
        assertThatThrownBy(() -> new Reply.FlowSummary(0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, LossBurst.NONE, "",
                null, "", null, "", 0, 0, 0, null, new long[] {7, 4}, null))
            .hasMessageContaining("adds up to 11, not the 10 received");
        assertThatThrownBy(() -> new Reply.FlowSummary(0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, LossBurst.NONE, "",
                null, "", null, "", 0, 0, 0, null, new long[] {11, -1}, null)).hasMessageContaining("receivedBySize");
        assertThat(new Reply.FlowSummary(0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, LossBurst.NONE, "", null, "", null, "", 0,
            0, 0, null, new long[] {7, 3}, null).receivedBySize()).containsExactly(7, 3);
    }

    @Test
    void aStepsIntervalsComeBackTheSameAndMustHoldOneOfEachPerInterval() throws Exception {
        Reply.Intervals iv = new Reply.Intervals(new long[] {5, 6}, new long[] {0, 1}, new long[] {0, 0},
            List.of("a", "b"), java.util.Arrays.asList(null, "c"));
        Reply.StepResult withIntervals = new Reply.StepResult(List.of(), Map.of(), Map.of(), List.of(), null, null, iv);
        Reply.Intervals back = ((Reply.StepResult) Codec.reply(Codec.encode(withIntervals))).intervals();
        assertThat(back.received()).containsExactly(5, 6);
        assertThat(back.delayBelowZero()).containsExactly(null, "c");
        assertThatThrownBy(() -> new Reply.Intervals(new long[] {5}, new long[] {0, 1}, new long[] {0}, List.of("a"),
            java.util.Arrays.asList((String) null))).hasMessageContaining("one entry of each kind per interval");
    }
}
