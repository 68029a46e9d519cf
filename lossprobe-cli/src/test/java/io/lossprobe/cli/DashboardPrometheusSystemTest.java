package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.control.Auth;
import io.lossprobe.control.ControlServer;
import io.lossprobe.control.ServerLimits;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.transport.Transports;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard against the real thing: lossprobe runs (one to a server with a policy, a second plan to the same
 * target, an echo run, a mesh with a policy) write their textfiles into one directory; Debian's node_exporter
 * serves them, Debian's Prometheus scrapes it with the shipped alerting rules loaded; every expression of
 * docs/grafana/lossprobe-dashboard.json (panels and template variables) returns data from Prometheus' HTTP API,
 * and node_exporter reports no textfile error (two runs of one target, mode and size used to collide there).
 */
class DashboardPrometheusSystemTest {
    private static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");
    private static final Path NODE_EXPORTER = Path.of("/usr/bin/prometheus-node-exporter");
    private static final Path DASHBOARD = Path.of("..", "docs", "grafana", "lossprobe-dashboard.json");
    private static final Path RULES = Path.of("..", "deploy", "prometheus", "lossprobe-rules.yml");
    /** Fixed ports in the range CI reserves from the ephemeral ones (.ci/run); no other test uses 47500-47599. */
    private static final int NODE_PORT = 47591;
    private static final int PROMETHEUS_PORT = 47592;
    private static final String SECRET = "a dashboard secret for tests";
    private static final Pattern LABEL_VALUES = Pattern.compile("^label_values\\((.*),\\s*\\w+\\)$");
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path dir;

    @Test
    @Tag("system")
    @Timeout(300)
    void everyDashboardExpressionReturnsDataFromPrometheusScrapingNodeExporter() throws Exception {
        assumeTrue(Files.isExecutable(PROMETHEUS) && Files.isExecutable(NODE_EXPORTER),
            "needs Debian's prometheus and prometheus-node-exporter (.ci/run installs them)");
        Path textfiles = Files.createDirectories(dir.resolve("textfiles"));
        writeTextfiles(textfiles);
        List<Process> started = new ArrayList<>();
        try {
            started.add(start("node-exporter", NODE_PORT, NODE_EXPORTER.toString(),
                "--web.listen-address=127.0.0.1:" + NODE_PORT, "--collector.disable-defaults", "--collector.textfile",
                "--collector.textfile.directory=" + textfiles));
            Path config = Files.writeString(dir.resolve("prometheus.yml"), "global:\n  scrape_interval: 1s\n"
                + "  evaluation_interval: 1s\nrule_files:\n  - " + RULES.toAbsolutePath().normalize() + "\n"
                + "scrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: ['127.0.0.1:" + NODE_PORT
                + "']\n");
            started.add(start("prometheus", PROMETHEUS_PORT, PROMETHEUS.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + PROMETHEUS_PORT));

            Map<String, String> exprs = expressions();
            assertThat(exprs).hasSizeGreaterThan(20);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            Map<String, String> empty = new LinkedHashMap<>(exprs);
            while (!empty.isEmpty() && System.nanoTime() < deadline) {
                empty.entrySet().removeIf(e -> !query(e.getValue()).isEmpty());
                if (!empty.isEmpty()) {
                    assertThat(started).allMatch(Process::isAlive);
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
                }
            }
            assertThat(empty).as("dashboard expressions with no data after 90 s (%s, %s)", log("node-exporter"),
                log("prometheus")).isEmpty();

            // Every file parsed, no series collided: node_exporter serves every sample of the four files. (Before
            // run names, two runs of one target, mode and size lost one file's series, node_exporter logging "44
            // error(s) occurred: ... was collected before with the same name and label values"; its
            // node_textfile_scrape_error stayed 0.)
            assertThat(query("node_textfile_scrape_error")).extracting(r -> r.path("value").get(1).asText())
                .containsExactly("0");
            long samples = 0;
            try (var files = Files.list(textfiles)) {
                for (Path f : files.toList()) {
                    samples += Files.readAllLines(f).stream().filter(l -> l.startsWith("lossprobe_")).count();
                }
            }
            assertThat(query("count({__name__=~\"lossprobe_.*\"})")).extracting(r -> r.path("value").get(1).asText())
                .containsExactly(Long.toString(samples));
            assertThat(log("node-exporter")).doesNotContain("collected before");
            // The two plans against one server, told apart by their names; the port kept in target.
            JsonNode byName = query("count by (name, target) (lossprobe_last_run_steps{target=\"127.0.0.1:"
                + serverPort + "\"})");
            assertThat(byName).hasSize(2);
            assertThat(query("lossprobe_last_run_steps{name=\"nightly-a\"}")).hasSize(1);
            // The shipped rules loaded into the real Prometheus; the failing mesh pair fires its alert.
            String rules = get("/api/v1/rules");
            assertThat(rules).contains("LossprobeRunStale", "LossprobeMeshPairBroken", "LossprobeLossAbovePolicy");
            JsonNode broken = awaitQuery("ALERTS{alertname=\"LossprobeMeshPairBroken\"}",
                System.nanoTime() + TimeUnit.SECONDS.toNanos(30));
            assertThat(broken).extracting(r -> r.path("metric").path("target").asText()).containsOnly("down");
        } finally {
            for (Process p : started) {
                p.destroy();
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
        }
    }

    private int serverPort;

    /** A checked run to a server, a second plan to it, an echo run and a checked mesh, all into {@code textfiles}. */
    private void writeTextfiles(Path textfiles) throws Exception {
        Path secret = Files.writeString(dir.resolve("secret"), SECRET + "\n");
        Path policy = Files.writeString(dir.resolve("policy.json"), "{\"defaults\": {\"maxLossPercent\": 5}}");
        List<String> quick = List.of("--transport", "udp", "--ports", "2", "--levels", "2k", "--warmup", "100ms",
            "--drain", "200ms", "--quiet");
        List<ControlServer> servers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                servers.add(new ControlServer("127.0.0." + (i + 1), 0, Auth.ofSecret(SECRET), ServerLimits.DEFAULTS,
                    Transports::available, new PrintWriter(new StringWriter())));
            }
            serverPort = servers.get(0).port();
            String target = "127.0.0.1:" + serverPort;
            run(quick, "run", "--target", target, "--secret-file", secret.toString(), "--base-port", "47500",
                "--duration", "300ms", "--policy", policy.toString(), "--name", "nightly-a", "-o",
                dir.resolve("a.json").toString(), "--prometheus", textfiles.resolve("a.prom").toString());
            // Another plan (a longer window) to the same target, mode and size, under its default name.
            run(quick, "run", "--target", target, "--secret-file", secret.toString(), "--base-port", "47510",
                "--duration", "400ms", "-o", dir.resolve("b.json").toString(), "--prometheus",
                textfiles.resolve("b.prom").toString());
            run(quick, "run", "--mode", "echo", "--base-port", "47520", "--duration", "300ms", "-o",
                dir.resolve("echo.json").toString(), "--prometheus", textfiles.resolve("echo.prom").toString());
            int closed;
            try (ServerSocket s = new ServerSocket(0)) {
                closed = s.getLocalPort(); // nothing listens there once closed: host "down" is down
            }
            List<String> mesh = new ArrayList<>(List.of("mesh", "--secret-file", secret.toString(), "--host",
                "b=127.0.0.2:" + servers.get(1).port(), "--host", "c=127.0.0.3:" + servers.get(2).port(), "--host",
                "down=127.0.0.4:" + closed, "--base-port", "47530", "--duration", "300ms", "--connect-timeout", "2s",
                "--policy", policy.toString(), "-o", dir.resolve("mesh.json").toString(), "--prometheus",
                textfiles.resolve("mesh.prom").toString()));
            mesh.addAll(quick);
            RunCommandTest.Outcome o = RunCommandTest.execute(mesh.toArray(String[]::new));
            assertThat(o.exit()).as("the pairs to the down host fail the policy: " + o.out() + o.err()).isEqualTo(1);
        } finally {
            for (ControlServer s : servers) {
                s.close();
            }
        }
        try (var files = Files.list(textfiles)) {
            assertThat(files.map(f -> f.getFileName().toString()).sorted())
                .containsExactly("a.prom", "b.prom", "echo.prom", "mesh.prom");
        }
    }

    private static void run(List<String> common, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(common);
        RunCommandTest.Outcome o = RunCommandTest.execute(all.toArray(String[]::new));
        assertThat(o.exit()).as(String.join(" ", all) + ": " + o.out() + o.err()).isZero();
    }

    /** Every query of the dashboard, by where it is: panels' targets and template variables. */
    private static Map<String, String> expressions() throws IOException {
        JsonNode root = ResultFiles.mapper().readTree(DASHBOARD.toFile());
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode panel : root.path("panels")) {
            for (JsonNode t : panel.path("targets")) {
                out.put("panel " + panel.path("id").asInt() + t.path("refId").asText() + " ("
                    + panel.path("title").asText() + ")", allValues(t.path("expr").asText()));
            }
        }
        for (JsonNode v : root.path("templating").path("list")) {
            String text = v.path("query").path("query").asText();
            Matcher m = LABEL_VALUES.matcher(text);
            out.put("variable " + v.path("name").asText(), allValues(m.matches() ? m.group(1) : text));
        }
        return out;
    }

    /** The expression as Grafana sends it with every variable at its "All" value. */
    private static String allValues(String expr) {
        return expr.replaceAll("\\$\\w+", ".*");
    }

    private JsonNode awaitQuery(String expr, long deadline) {
        JsonNode r = query(expr);
        while (r.isEmpty() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
            r = query(expr);
        }
        return r;
    }

    /** The result vector of an instant query (empty while Prometheus is not up or has no data). */
    private JsonNode query(String expr) {
        try {
            JsonNode body = ResultFiles.mapper().readTree(get("/api/v1/query?query="
                + URLEncoder.encode(expr, StandardCharsets.UTF_8)));
            assertThat(body.path("status").asText()).as(expr + ": " + body).isEqualTo("success");
            JsonNode result = body.path("data").path("result");
            return result.isArray() ? result : ResultFiles.mapper().createArrayNode().add(result);
        } catch (IOException e) {
            return ResultFiles.mapper().createArrayNode(); // not listening yet
        }
    }

    private String get(String path) throws IOException {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + PROMETHEUS_PORT + path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
            return r.body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** Starts {@code cmd}, which listens on {@code port} of loopback, its output in NAME.log. */
    private Process start(String name, int port, String... cmd) throws IOException {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            assertThat(s.getLocalPort()).isEqualTo(port);
        } catch (IOException e) {
            throw new IOException("port " + port + " is in use: another test or service holds it", e);
        }
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile())
            .start();
    }

    private String log(String name) {
        try {
            return name + " said: " + Files.readString(dir.resolve(name + ".log"));
        } catch (IOException e) {
            return name + ": no log";
        }
    }
}
