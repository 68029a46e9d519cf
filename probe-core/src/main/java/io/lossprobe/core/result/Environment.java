package io.lossprobe.core.result;

import java.util.Map;

/**
 * Where a run happened, so a result file explains itself.
 *
 * @param socketBuffers     what the kernel allows and what each transport asked for and was granted, in bytes:
 *                          the {@code net.core.*} sysctls and the {@code *BufferRequested} / {@code *BufferGranted}
 *                          entries (e.g. {@code net.core.rmem_max}, {@code udp.receiveBufferGranted})
 * @param transportSettings how each transport was set up, as numbers (flags are 1 or 0; e.g.
 *                          {@code udp.gsoSegmentsPerSend}, {@code udp.io.epoll}, {@code tcp.noDelay},
 *                          {@code aeron.termLength}); empty in files written before it existed
 */
public record Environment(String lossprobeVersion, String host, String os, String kernel, int cores, String jvm,
                          Map<String, Long> socketBuffers, Map<String, Long> transportSettings) {
    public Environment {
        socketBuffers = Maps.sorted(socketBuffers);
        transportSettings = Maps.sorted(transportSettings);
    }
}
