package io.lossprobe.core.result;

import java.util.Map;

/**
 * Where a run happened, so a result file explains itself.
 *
 * @param socketBuffers what the kernel allows and what each transport was granted, in bytes
 *                      (e.g. {@code net.core.rmem_max}, {@code udp.receiveBufferGranted})
 */
public record Environment(String lossprobeVersion, String host, String os, String kernel, int cores, String jvm,
                          Map<String, Long> socketBuffers) {
    public Environment {
        socketBuffers = Maps.sorted(socketBuffers);
    }
}
