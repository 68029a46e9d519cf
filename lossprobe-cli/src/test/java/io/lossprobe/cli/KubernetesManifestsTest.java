package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.lossprobe.analysis.Policy;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The manifests in deploy/kubernetes, read into the Kubernetes object model (fabric8's classes, generated from the
 * API's OpenAPI schema): every field must be one the model knows (a misspelt field lands in a class's
 * "additionalProperties", which must stay empty), the pieces must fit together (selectors, names, mounts, ports),
 * and the mesh CronJob's arguments must parse as the {@code lossprobe mesh} command the lab test runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesManifestsTest {
    private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of("Namespace", Namespace.class,
        "Secret", Secret.class, "ConfigMap", ConfigMap.class, "Service", Service.class, "PersistentVolumeClaim",
        PersistentVolumeClaim.class, "DaemonSet", DaemonSet.class, "CronJob", CronJob.class, "NetworkPolicy",
        NetworkPolicy.class);
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    private Path dir;
    private final Map<String, HasMetadata> byName = new LinkedHashMap<>();

    @BeforeAll
    void read() throws Exception {
        dir = Paths.get("").toAbsolutePath().getParent().resolve("deploy/kubernetes");
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                if (f.getFileName().toString().equals("kustomization.yaml")) {
                    continue;
                }
                for (HasMetadata r : parse(Files.readString(f), f.getFileName().toString())) {
                    byName.put(r.getKind() + "/" + r.getMetadata().getName(), r);
                }
            }
        }
    }

    private static List<HasMetadata> parse(String yaml, String origin) throws Exception {
        List<HasMetadata> out = new ArrayList<>();
        try (MappingIterator<JsonNode> docs = YAML.readValues(YAML.createParser(yaml), JsonNode.class)) {
            while (docs.hasNext()) {
                JsonNode doc = docs.next();
                if (doc == null || doc.isEmpty()) {
                    continue;
                }
                String kind = doc.path("kind").asText();
                Class<? extends HasMetadata> type = KINDS.get(kind);
                assertThat(type).as("%s: kind %s", origin, kind).isNotNull();
                HasMetadata r = YAML.treeToValue(doc, type);
                List<String> unknown = new ArrayList<>();
                unknownFields(r, kind, unknown, new IdentityHashMap<>());
                assertThat(unknown).as("%s: fields the Kubernetes model does not know", origin).isEmpty();
                out.add(r);
            }
        }
        return out;
    }

    /** Walks the model objects; any "additionalProperties" entry is a field the schema does not have. */
    private static void unknownFields(Object o, String path, List<String> unknown, Map<Object, Boolean> seen)
        throws Exception {
        if (o == null || seen.put(o, true) != null) {
            return;
        }
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object e : c) {
                unknownFields(e, path + "[" + i++ + "]", unknown, seen);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                unknownFields(e.getValue(), path + "." + e.getKey(), unknown, seen);
            }
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.")) {
            return;
        }
        for (Method getter : o.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || !getter.getName().startsWith("get")
                || getter.getDeclaringClass() == Object.class) {
                continue;
            }
            Object value = getter.invoke(o);
            if (getter.getName().equals("getAdditionalProperties")) {
                if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    unknown.add(path + ": " + extra.keySet());
                }
                continue;
            }
            unknownFields(value, path + "." + getter.getName().substring(3), unknown, seen);
        }
    }

    @SuppressWarnings("unchecked")
    private <T extends HasMetadata> T get(Class<T> type, String name) {
        HasMetadata r = byName.get(type.getSimpleName() + "/" + name);
        assertThat(r).as("%s/%s in deploy/kubernetes (have %s)", type.getSimpleName(), name, byName.keySet())
            .isNotNull();
        return (T) r;
    }

    @Test
    void everyManifestIsInTheModelAndInTheNamespace() {
        assertThat(byName.keySet()).containsExactlyInAnyOrder("Namespace/lossprobe", "Secret/lossprobe-secret",
            "DaemonSet/lossprobe-serve", "Service/lossprobe-serve", "ConfigMap/lossprobe-mesh-policy",
            "PersistentVolumeClaim/lossprobe-results", "CronJob/lossprobe-mesh", "CronJob/lossprobe-mesh-report",
            "NetworkPolicy/lossprobe-serve");
        byName.values().stream().filter(r -> !(r instanceof Namespace))
            .forEach(r -> assertThat(r.getMetadata().getNamespace()).as(r.getKind()).isEqualTo("lossprobe"));
    }

    @Test
    void serveRunsOnEveryNodesNetworkWithTheSecretAndLimits() {
        DaemonSet ds = get(DaemonSet.class, "lossprobe-serve");
        PodSpec pod = ds.getSpec().getTemplate().getSpec();
        assertThat(ds.getSpec().getSelector().getMatchLabels())
            .isEqualTo(ds.getSpec().getTemplate().getMetadata().getLabels());
        assertThat(pod.getHostNetwork()).isTrue();
        assertThat(pod.getDnsPolicy()).isEqualTo("ClusterFirstWithHostNet");
        Container c = pod.getContainers().get(0);
        assertThat(c.getArgs().get(0)).isEqualTo("serve");
        assertThat(c.getResources().getLimits()).containsKeys("cpu", "memory");
        assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(c.getReadinessProbe().getTcpSocket().getPort().getIntVal()).isEqualTo(7400);
        assertSecretMounted(pod, c);
        CommandLine.ParseResult parsed = parse(substitute(c.getArgs()));
        ServeCommand serve = (ServeCommand) parsed.subcommand().commandSpec().userObject();
        assertThat(serve.port).isEqualTo(7400);
        assertThat(serve.bind).isEqualTo("10.0.0.5");

        Service svc = get(Service.class, "lossprobe-serve");
        assertThat(svc.getSpec().getClusterIP()).as("headless").isEqualTo("None");
        assertThat(svc.getSpec().getPublishNotReadyAddresses()).isTrue();
        assertThat(svc.getSpec().getSelector()).isEqualTo(ds.getSpec().getSelector().getMatchLabels());
    }

    private void assertSecretMounted(PodSpec pod, Container c) {
        Volume secret = pod.getVolumes().stream().filter(v -> v.getSecret() != null).findFirst().orElseThrow();
        assertThat(secret.getSecret().getSecretName()).isEqualTo(get(Secret.class, "lossprobe-secret")
            .getMetadata().getName());
        VolumeMount mount = c.getVolumeMounts().stream().filter(m -> m.getName().equals(secret.getName()))
            .findFirst().orElseThrow();
        String file = mount.getMountPath() + "/" + get(Secret.class, "lossprobe-secret").getStringData().keySet()
            .iterator().next();
        assertThat(c.getArgs()).contains("--secret-file=" + file);
    }

    /** The container's $(VAR) references as the kubelet fills them in on a node at 10.0.0.5. */
    private static String[] substitute(List<String> args) {
        return args.stream().map(a -> a.replace("$(NODE_IP)", "10.0.0.5")).toArray(String[]::new);
    }

    private static CommandLine.ParseResult parse(String... args) {
        return LossprobeCommand.commandLine().parseArgs(args);
    }

    @Test
    void theMeshCronJobRunsTheMeshCommandOnePodPerNode() throws Exception {
        CronJob cron = get(CronJob.class, "lossprobe-mesh");
        assertThat(cron.getSpec().getConcurrencyPolicy()).isEqualTo("Forbid");
        assertThat(cron.getSpec().getTimeZone()).isEqualTo("Etc/UTC");
        var job = cron.getSpec().getJobTemplate().getSpec();
        assertThat(job.getParallelism()).isEqualTo(job.getCompletions());
        assertThat(job.getCompletionMode()).isEqualTo("Indexed");
        assertThat(job.getBackoffLimitPerIndex()).isZero();
        PodSpec pod = job.getTemplate().getSpec();
        assertThat(pod.getHostNetwork()).isTrue();
        assertThat(pod.getDnsPolicy()).isEqualTo("ClusterFirstWithHostNet");
        assertThat(pod.getRestartPolicy()).isEqualTo("Never");
        var anti = pod.getAffinity().getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().get(0);
        assertThat(anti.getTopologyKey()).isEqualTo("kubernetes.io/hostname");
        assertThat(job.getTemplate().getMetadata().getLabels()).containsAllEntriesOf(anti.getLabelSelector()
            .getMatchLabels());
        Container c = pod.getContainers().get(0);
        assertThat(c.getResources().getLimits()).containsKeys("cpu", "memory");
        assertSecretMounted(pod, c);

        // The arguments are a 'lossprobe mesh' the command line accepts, with values that fit the other manifests.
        CommandLine.ParseResult parsed = parse(substitute(c.getArgs()));
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("mesh");
        MeshCommand mesh = (MeshCommand) parsed.subcommand().commandSpec().userObject();
        Service svc = get(Service.class, "lossprobe-serve");
        assertThat(mesh.hostsDns).isEqualTo(svc.getMetadata().getName() + "." + svc.getMetadata().getNamespace()
            + ".svc.cluster.local");
        assertThat(mesh.asSource).containsExactly("10.0.0.5");
        Instant start = MeshSchedule.parseStart(mesh.startAt, Instant.parse("2026-12-01T03:00:00Z"));
        assertThat(start).as("after the schedule (03:00) and its starting deadline")
            .isAfter(Instant.parse("2026-12-01T03:00:00Z").plusSeconds(cron.getSpec().getStartingDeadlineSeconds()));
        assertThat(mountOf(pod, c, "results")).isEqualTo(mesh.output.toString());
        assertThat(mountOf(pod, c, "textfile")).isEqualTo(mesh.checkOutputs.prometheus.getParent().toString());
        assertThat(pod.getVolumes().stream().filter(v -> v.getName().equals("results")).findFirst().orElseThrow()
            .getPersistentVolumeClaim().getClaimName()).isEqualTo(get(PersistentVolumeClaim.class,
                "lossprobe-results").getMetadata().getName());
        var plan = mesh.planOptions.plan("10.0.0.6", "stream", 0, mesh.planOptions.transportOptionsInEffect());
        // The whole mesh fits the Job's deadline at the sizes docs/kubernetes.md gives (full mesh of 4 nodes).
        long slotMs = MeshSchedule.estimateSlotMs(plan, 2_000);
        long rounds = MeshSchedule.rounds(MeshPairs.select(hosts(job.getParallelism()), mesh.pairs, null, 0), 0)
            .size();
        assertThat(rounds * slotMs / 1000).isLessThan(job.getActiveDeadlineSeconds());
        // Its data ports are among those the NetworkPolicy lets in.
        NetworkPolicyPort udp = get(NetworkPolicy.class, "lossprobe-serve").getSpec().getIngress().get(0).getPorts()
            .stream().filter(p -> p.getProtocol().equals("UDP")).findFirst().orElseThrow();
        assertThat(plan.basePort()).isGreaterThanOrEqualTo(udp.getPort().getIntVal());
        assertThat(plan.basePort() + plan.ports() - 1).isLessThanOrEqualTo(udp.getEndPort());
    }

    private static List<io.lossprobe.analysis.MeshResult.Host> hosts(int n) {
        List<io.lossprobe.analysis.MeshResult.Host> hosts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            hosts.add(new io.lossprobe.analysis.MeshResult.Host("n" + i, "10.0.0." + (i + 1), 7400));
        }
        return hosts;
    }

    private static String mountOf(PodSpec pod, Container c, String volume) {
        assertThat(pod.getVolumes()).extracting(Volume::getName).contains(volume);
        return c.getVolumeMounts().stream().filter(m -> m.getName().equals(volume)).findFirst().orElseThrow()
            .getMountPath();
    }

    @Test
    void theReportJobMergesChecksAndDrawsWithCommandsThatParse() throws Exception {
        CronJob cron = get(CronJob.class, "lossprobe-mesh-report");
        PodSpec pod = cron.getSpec().getJobTemplate().getSpec().getTemplate().getSpec();
        Container c = pod.getContainers().get(0);
        String script = String.join(" ", c.getArgs()).replace("$(date -u +%Y%m%d)", "20261201")
            .replace("$day", "20261201");
        List<String> commands = new ArrayList<>();
        for (String part : script.split("&&")) {
            String cmd = part.strip();
            if (cmd.startsWith("lossprobe ")) {
                commands.add(cmd.substring("lossprobe ".length()));
            }
        }
        assertThat(commands).hasSize(3);
        for (String cmd : commands) {
            parse(cmd.split("\\s+")); // throws on anything the command line refuses
        }
        assertThat(commands.get(0)).startsWith("mesh merge");
        // The mesh pods name their files lossprobe-mesh-SOURCE-YYYYMMDD-HHMMSS.json in the same volume.
        assertThat(commands.get(0)).contains("/results/lossprobe-mesh-*-20261201-*.json");
        String policyDir = mountOf(pod, c, "policy");
        ConfigMap policy = get(ConfigMap.class, "lossprobe-mesh-policy");
        String key = policy.getData().keySet().iterator().next();
        assertThat(commands.get(2)).contains("--policy " + policyDir + "/" + key);
        Path file = Files.writeString(Files.createTempFile("policy", ".json"), policy.getData().get(key));
        assertThat(Policy.read(file)).isNotNull(); // a policy lossprobe check accepts
    }

    @Test
    void theNetworkPolicyLetsOnlyTheMeshReachServe() {
        NetworkPolicy np = get(NetworkPolicy.class, "lossprobe-serve");
        DaemonSet ds = get(DaemonSet.class, "lossprobe-serve");
        assertThat(np.getSpec().getPodSelector().getMatchLabels()).isEqualTo(ds.getSpec().getSelector()
            .getMatchLabels());
        assertThat(np.getSpec().getPolicyTypes()).containsExactly("Ingress");
        assertThat(np.getSpec().getIngress()).hasSize(1);
        var rule = np.getSpec().getIngress().get(0);
        assertThat(rule.getFrom().get(0).getPodSelector().getMatchLabels()).isEqualTo(get(CronJob.class,
            "lossprobe-mesh").getSpec().getJobTemplate().getSpec().getTemplate().getMetadata().getLabels());
        assertThat(rule.getPorts()).anySatisfy(p -> {
            assertThat(p.getProtocol()).isEqualTo("TCP");
            assertThat(p.getPort().getIntVal()).isEqualTo(7400);
            assertThat(p.getEndPort()).isNull();
        });
    }

    /** What {@code kubectl apply -k} would send: kustomize's output reads into the model too (when kubectl is here). */
    @Test
    void theKustomizationBuilds(@TempDir Path tmp) throws Exception {
        Path kubectl = Stream.of("/usr/bin/kubectl", "/usr/local/bin/kubectl").map(Paths::get)
            .filter(Files::isExecutable).findFirst().orElse(null);
        assumeTrue(kubectl != null, "kubectl not installed");
        Path copy = Files.createDirectories(tmp.resolve("k"));
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.copy(f, copy.resolve(f.getFileName()));
            }
        }
        Files.writeString(copy.resolve("secret.txt"), "a secret made for the test\n");
        Process p = new ProcessBuilder(kubectl.toString(), "kustomize", copy.toString()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assumeTrue(p.exitValue() == 0 || !err.contains("kustomize"), err);
        assertThat(p.exitValue()).as(err).isZero();
        List<HasMetadata> rendered = parse(out, "kubectl kustomize");
        Set<String> kinds = new java.util.TreeSet<>();
        rendered.forEach(r -> kinds.add(r.getKind() + "/" + r.getMetadata().getName()));
        assertThat(kinds).isEqualTo(new java.util.TreeSet<>(byName.keySet()));
        Secret secret = (Secret) rendered.stream().filter(r -> r instanceof Secret).findFirst().orElseThrow();
        assertThat(secret.getData()).containsOnlyKeys("secret");
    }
}
