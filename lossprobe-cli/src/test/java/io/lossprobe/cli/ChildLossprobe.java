package io.lossprobe.cli;

import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/** lossprobe's {@link Main} in a JVM of its own, on this test JVM's class path, with JVM options of the test's. */
final class ChildLossprobe {
    private ChildLossprobe() {
    }

    static ProcessBuilder builder(List<String> jvmOptions, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
            .toString()));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
            System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).redirectErrorStream(true);
    }
}
