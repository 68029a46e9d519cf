package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A real multicast run in the lab (sample-multicast.json: UDP, 4 flows at 20k/s, three receivers, 1 % of the group
 * dropped on 198.18.0.102's link): the verdict's figures are the worst receiver's, and a line names every receiver.
 */
class MulticastVerdictTest {
    private static RunResult sample() throws Exception {
        return ResultFiles.read(Path.of(MulticastVerdictTest.class.getResource("/sample-multicast.json").toURI()));
    }

    @Test
    void theVerdictNamesTheWorstReceiverAndTheOnesThatLostNothing() throws Exception {
        RunResult run = sample();
        assertThat(run.steps().get(0).worstReceiver()).isEqualTo("198.18.0.102");
        assertThat(Verdict.of(run)).contains("udp: multicast to 3 receivers, each step's figures its worst "
            + "receiver's; 198.18.0.102 lost 178 of 20,000; 198.18.0.101, 198.18.0.103 lost nothing");
        assertThat(Verdict.of(run).get(0)).startsWith("udp: loss from the lowest level, 0.89 % at 20k");
    }

    /**
     * A real Aeron multi-destination-cast run on loopback (sample-mdc.json: {@code run --mdc}, 4 flows at 20k/s, serves
     * on 127.0.0.2 and 127.0.0.3, this host's publications at 127.0.0.1): labelled and worded as what it was.
     */
    @Test
    void aMultiDestinationCastRunIsLabelledWithItsSenderAndReceivers() throws Exception {
        RunResult run = ResultFiles.read(Path.of(MulticastVerdictTest.class.getResource("/sample-mdc.json").toURI()));
        assertThat(RunLabels.multicastTarget(run)).isEqualTo("mdc:127.0.0.1->127.0.0.2,127.0.0.3");
        assertThat(RunLabels.multicastKind(run)).isEqualTo("multi-destination-cast");
        assertThat(Verdict.of(run)).contains("aeron: multi-destination-cast to 2 receivers, each step's figures its "
            + "worst receiver's; 127.0.0.2, 127.0.0.3 lost nothing");
        assertThat(RunLabels.multicastTarget(sample())).startsWith("239.255.0.1->198.18.0.101,");
        assertThat(RunLabels.multicastKind(sample())).isEqualTo("multicast");
    }

    @Test
    void unicastRunsHaveNoReceiversLine() {
        assertThat(Verdict.receivers(java.util.List.of())).isEmpty();
    }
}
