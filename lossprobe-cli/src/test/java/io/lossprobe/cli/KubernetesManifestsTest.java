package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
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
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.Rule;
import io.fabric8.openshift.api.model.monitoring.v1.RuleGroup;
import io.lossprobe.analysis.Policy;
import io.lossprobe.core.transport.Transports;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * and the mesh CronJob's arguments must parse as the {@code lossprobe mesh} command the lab test runs. The
 * PriorityClass is read into kubernetes-model-scheduling's class and prometheus-operator's PrometheusRule into
 * openshift-model-monitoring's, as strictly as the rest. Every field used is checked against the version floor.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesManifestsTest {
    private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of("Namespace", Namespace.class,
        "Secret", Secret.class, "ConfigMap", ConfigMap.class, "Service", Service.class, "PersistentVolumeClaim",
        PersistentVolumeClaim.class, "DaemonSet", DaemonSet.class, "CronJob", CronJob.class, "NetworkPolicy",
        NetworkPolicy.class, "PriorityClass", PriorityClass.class, "PrometheusRule", PrometheusRule.class);
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
        .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    /**
     * The fields added, after Kubernetes 1.21 (batch/v1 CronJob's GA), to the objects these manifests use, with the
     * release from which each is there and on by default (beta or GA; an alpha field is off and dropped). From the
     * Kubernetes changelogs and KEPs (Namespace.label...: the Pod Security labels); a field not listed is older than
     * 1.21. The floor in kustomization.yaml must be the newest of those used:
     * {@link #theVersionFloorIsWrittenOnceAndIsTheNewestFieldUsed}.
     */
    private static final Map<String, String> FIELDS_SINCE = since("""
        1.19 PodSecurityContext.seccompProfile SecurityContext.seccompProfile
        1.20 PodSecurityContext.fsGroupChangePolicy
        1.21 JobSpec.ttlSecondsAfterFinished Volume.ephemeral
        1.22 JobSpec.completionMode JobSpec.suspend RollingUpdateDaemonSet.maxSurge NetworkPolicyPort.endPort
        1.22 ServiceSpec.internalTrafficPolicy
        1.23 Namespace.label.pod-security.kubernetes.io
        1.24 PodSpec.os Probe.grpc PersistentVolumeClaimSpec.dataSourceRef PriorityClass.preemptionPolicy
        1.26 JobSpec.podFailurePolicy TopologySpreadConstraint.nodeAffinityPolicy
        1.27 CronJobSpec.timeZone PodSpec.schedulingGates TopologySpreadConstraint.minDomains
        1.27 TopologySpreadConstraint.matchLabelKeys
        1.29 JobSpec.backoffLimitPerIndex JobSpec.maxFailedIndexes JobSpec.podReplacementPolicy
        1.29 Container.restartPolicy
        1.30 PodSecurityContext.appArmorProfile SecurityContext.appArmorProfile LifecycleHandler.sleep
        1.31 JobSpec.successPolicy PodAffinityTerm.matchLabelKeys PodAffinityTerm.mismatchLabelKeys
        1.31 ServiceSpec.trafficDistribution
        1.32 JobSpec.managedBy
        1.33 PodSpec.hostUsers PodSecurityContext.supplementalGroupsPolicy PodSecurityContext.seLinuxChangePolicy
        1.33 Container.resizePolicy Volume.image
        1.34 PodSpec.resourceClaims PodSpec.resources PersistentVolumeClaimSpec.volumeAttributesClassName
        """);
    /** What a JVM takes beyond its heap in these pods (metaspace, code cache, threads, direct buffers). */
    private static final long JVM_OVERHEAD = 128L << 20;
    private Path dir;
    private final Map<String, HasMetadata> byName = new LinkedHashMap<>();
    private final Set<String> fieldsUsed = new TreeSet<>();

    @BeforeAll
    void read() throws Exception {
        dir = Paths.get("").toAbsolutePath().getParent().resolve("deploy/kubernetes");
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                if (f.getFileName().toString().equals("kustomization.yaml")) {
                    continue;
                }
                for (HasMetadata r : parse(Files.readString(f), dir.relativize(f).toString(), fieldsUsed)) {
                    byName.put(r.getKind() + "/" + r.getMetadata().getName(), r);
                }
            }
        }
    }

    private static List<HasMetadata> parse(String yaml, String origin) throws Exception {
        return parse(yaml, origin, new TreeSet<>());
    }

    /** The documents of {@code yaml} in the model; {@code used} gets each field set, as Type.field. */
    private static List<HasMetadata> parse(String yaml, String origin, Set<String> used) throws Exception {
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
                assertThat(r.getApiVersion()).as("%s: %s's apiVersion", origin, kind)
                    .isEqualTo(HasMetadata.getApiVersion(type));
                List<String> unknown = new ArrayList<>();
                unknownFields(r, kind, unknown, new IdentityHashMap<>(), used);
                assertThat(unknown).as("%s: fields the Kubernetes model does not know", origin).isEmpty();
                if (r.getMetadata().getLabels() != null && r.getMetadata().getLabels().keySet().stream()
                    .anyMatch(l -> l.startsWith("pod-security.kubernetes.io/"))) {
                    used.add(kind + ".label.pod-security.kubernetes.io");
                }
                out.add(r);
            }
        }
        return out;
    }

    /**
     * Walks the model objects; any "additionalProperties" entry is a field the schema does not have. Every field
     * that is set goes into {@code used} as Type.field.
     */
    private static void unknownFields(Object o, String path, List<String> unknown, Map<Object, Boolean> seen,
        Set<String> used) throws Exception {
        if (o == null || seen.put(o, true) != null) {
            return;
        }
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object e : c) {
                unknownFields(e, path + "[" + i++ + "]", unknown, seen, used);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                unknownFields(e.getValue(), path + "." + e.getKey(), unknown, seen, used);
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
            String field = Character.toLowerCase(getter.getName().charAt(3)) + getter.getName().substring(4);
            if (value != null && !(value instanceof Collection<?> c && c.isEmpty())
                && !(value instanceof Map<?, ?> m && m.isEmpty())) {
                used.add(o.getClass().getSimpleName() + "." + field);
            }
            unknownFields(value, path + "." + getter.getName().substring(3), unknown, seen, used);
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
            "PersistentVolumeClaim/lossprobe-results", "CronJob/lossprobe-mesh", "NetworkPolicy/lossprobe-serve",
            "PriorityClass/lossprobe", "PrometheusRule/lossprobe");
        byName.values().stream().filter(r -> !(r instanceof Namespace) && !r.getKind().equals("PriorityClass"))
            .forEach(r -> assertThat(r.getMetadata().getNamespace()).as(r.getKind()).isEqualTo("lossprobe"));
        assertThat(byName.get("PriorityClass/lossprobe").getMetadata().getNamespace()).as("cluster-scoped").isNull();
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
        assertThat(c.getResources().getLimits()).containsOnlyKeys("memory");
        assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
        assertSecretMounted(pod, c);
        ServeCommand serve = serve();
        assertThat(serve.port).isEqualTo(7400);
        assertThat(serve.bind).isEqualTo("10.0.0.5");
        // Probes that open no connection to serve (which logs every connection that does not authenticate): they
        // look for serve's port among the node's listening sockets, in the kernel's table (port in hex, 0A LISTEN).
        for (Probe probe : List.of(c.getReadinessProbe(), c.getLivenessProbe())) {
            assertThat(probe.getExec()).isNotNull();
            assertThat(String.join(" ", probe.getExec().getCommand()))
                .contains(String.format(":%04X [0-9A-F]+:0000 0A", serve.port), "/proc/net/tcp ", "/proc/net/tcp6");
        }

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

    /** serve's $(VAR) references as the kubelet fills them in on a node at 10.0.0.5. */
    private static String[] substitute(List<String> args) {
        return args.stream().map(a -> a.replace("$(NODE_IP)", "10.0.0.5")).toArray(String[]::new);
    }

    private ServeCommand serve() {
        Container c = get(DaemonSet.class, "lossprobe-serve").getSpec().getTemplate().getSpec().getContainers().get(0);
        return (ServeCommand) parse(substitute(c.getArgs())).subcommand().commandSpec().userObject();
    }

    private MeshCommand mesh() {
        Container c = meshPod().getContainers().get(0);
        return (MeshCommand) parse(c.getArgs().toArray(String[]::new)).subcommand().commandSpec().userObject();
    }

    private PodSpec meshPod() {
        return get(CronJob.class, "lossprobe-mesh").getSpec().getJobTemplate().getSpec().getTemplate().getSpec();
    }

    private static CommandLine.ParseResult parse(String... args) {
        return LossprobeCommand.commandLine().parseArgs(args);
    }

    /**
     * One pod drives every pair ({@code mesh --drive}): not an Indexed Job of one pod per node, no host network, no
     * wall-clock slots, pinned to the node whose node_exporter serves its textfile.
     */
    @Test
    void theMeshCronJobRunsOnePodThatDrivesEveryPair() throws Exception {
        CronJob cron = get(CronJob.class, "lossprobe-mesh");
        assertThat(cron.getSpec().getConcurrencyPolicy()).isEqualTo("Forbid");
        assertThat(cron.getSpec().getTimeZone()).isEqualTo("Etc/UTC");
        var job = cron.getSpec().getJobTemplate().getSpec();
        assertThat(job.getCompletionMode()).as("not Indexed").isNull();
        assertThat(job.getCompletions()).as("one pod").isNull();
        assertThat(job.getParallelism()).as("one pod").isNull();
        assertThat(job.getBackoffLimitPerIndex()).isNull();
        assertThat(job.getBackoffLimit()).as("a failed mesh is not measured again").isZero();
        PodSpec pod = job.getTemplate().getSpec();
        assertThat(pod.getHostNetwork()).as("the driver sends and receives no data").isNotEqualTo(Boolean.TRUE);
        assertThat(pod.getDnsPolicy()).isNull();
        assertThat(pod.getAffinity()).as("no anti-affinity: there is one pod").isNull();
        assertThat(pod.getRestartPolicy()).isEqualTo("Never");
        assertThat(pod.getNodeSelector()).containsOnlyKeys("kubernetes.io/hostname");
        Container c = pod.getContainers().get(0);
        assertThat(c.getResources().getLimits()).containsOnlyKeys("memory");
        assertSecretMounted(pod, c);
        assertThat(c.getArgs()).contains("--drive").noneMatch(a -> a.startsWith("--start-at")
            || a.startsWith("--slot") || a.startsWith("--as-source") || a.contains("$("));

        // The arguments are a 'lossprobe mesh --drive' the command line accepts, with values that fit the other
        // manifests.
        CommandLine.ParseResult parsed = parse(c.getArgs().toArray(String[]::new));
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("mesh");
        MeshCommand mesh = (MeshCommand) parsed.subcommand().commandSpec().userObject();
        assertThat(mesh.drive).isTrue();
        Service svc = get(Service.class, "lossprobe-serve");
        assertThat(mesh.hostsDns).isEqualTo(svc.getMetadata().getName() + "." + svc.getMetadata().getNamespace()
            + ".svc.cluster.local");
        assertThat(mountOf(pod, c, "results")).isEqualTo(mesh.output.toString());
        assertThat(mountOf(pod, c, "textfile")).isEqualTo(mesh.checkOutputs.prometheus.getParent().toString());
        // With the policy, the textfile carries lossprobe_mesh_check_passed for every pair.
        ConfigMap policy = get(ConfigMap.class, "lossprobe-mesh-policy");
        assertThat(mesh.policy.given()).isTrue();
        assertThat(mesh.policy.policy.toString()).isEqualTo(mountOf(pod, c, "policy") + "/"
            + policy.getData().keySet().iterator().next());
        assertThat(pod.getVolumes().stream().filter(v -> v.getName().equals("policy")).findFirst().orElseThrow()
            .getConfigMap().getName()).isEqualTo(policy.getMetadata().getName());
        assertThat(Policy.read(Files.writeString(Files.createTempFile("policy", ".json"), policy.getData().values()
            .iterator().next()))).as("a policy lossprobe check accepts").isNotNull();
        assertThat(pod.getVolumes().stream().filter(v -> v.getName().equals("results")).findFirst().orElseThrow()
            .getPersistentVolumeClaim().getClaimName()).isEqualTo(get(PersistentVolumeClaim.class,
                "lossprobe-results").getMetadata().getName());
        // A full mesh of the nodes docs/kubernetes.md promises fits the Job's deadline, its rounds back to back.
        var plan = mesh.planOptions.plan("10.0.0.6", "stream", 0, mesh.planOptions.transportOptionsInEffect());
        int nodes = nodesTheDeadlineHolds();
        long rounds = MeshSchedule.rounds(MeshPairs.select(hosts(nodes), mesh.pairs, null, 0), 0).size();
        assertThat(rounds * MeshSchedule.estimatePairMs(plan) / 1000).isLessThan(job.getActiveDeadlineSeconds());
    }

    /** "holds a full mesh of up to N nodes": the same N in mesh-cronjob.yaml and docs/kubernetes.md. */
    private int nodesTheDeadlineHolds() throws Exception {
        Pattern says = Pattern.compile("holds a full mesh of up to (\\d+) nodes");
        Matcher inManifest = says.matcher(Files.readString(dir.resolve("mesh-cronjob.yaml")));
        Matcher inDocs = says.matcher(Files.readString(docs()).replaceAll("\\s+", " "));
        assertThat(inManifest.find()).as("mesh-cronjob.yaml says how many nodes its deadline holds").isTrue();
        assertThat(inDocs.find()).as("docs/kubernetes.md says how many nodes the deadline holds").isTrue();
        assertThat(inDocs.group(1)).isEqualTo(inManifest.group(1));
        return Integer.parseInt(inManifest.group(1));
    }

    /**
     * The CronJob's own command, run with {@code --dry-run} in a copy of the pod's mounts (the Service's name
     * replaced by four node addresses): lossprobe accepts it and drives every pair from here, rounds back to back.
     */
    @Test
    void theMeshsCommandIsAcceptedAndDrivesEveryPairFromThePod(@TempDir Path root) throws Exception {
        PodSpec pod = meshPod();
        Container c = pod.getContainers().get(0);
        ConfigMap policy = get(ConfigMap.class, "lossprobe-mesh-policy");
        Path policyDir = Files.createDirectories(root.resolve(mountOf(pod, c, "policy").substring(1)));
        policy.getData().forEach((k, v) -> write(policyDir.resolve(k), v));
        Path secretDir = Files.createDirectories(root.resolve(mountOf(pod, c, "secret").substring(1)));
        write(secretDir.resolve(get(Secret.class, "lossprobe-secret").getStringData().keySet().iterator().next()),
            "a secret made for the test\n");
        List<String> args = new ArrayList<>();
        for (String a : c.getArgs()) {
            if (a.startsWith("--hosts-dns=")) {
                for (int i = 1; i <= 4; i++) {
                    args.add("--host=10.0.0." + i);
                }
                continue;
            }
            String arg = a;
            args.add(c.getVolumeMounts().stream().map(VolumeMount::getMountPath)
                .filter(m -> arg.contains("=" + m + "/") || arg.endsWith("=" + m)).findFirst()
                .map(m -> arg.replace("=" + m, "=" + root + m)).orElse(arg));
        }
        Files.createDirectories(root.resolve(mountOf(pod, c, "results").substring(1)));
        Files.createDirectories(root.resolve(mountOf(pod, c, "textfile").substring(1)));
        args.add("--dry-run");
        RunCommandTest.Outcome o = RunCommandTest.execute(args.toArray(String[]::new));
        assertThat(o.exit()).as(o.out() + o.err()).isZero();
        assertThat(o.out()).contains("4 hosts, full: 12 pairs in 6 rounds; rounds back to back; 12 pairs from here");
    }

    private static void write(Path file, String text) {
        try {
            Files.writeString(file, text);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
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

    /**
     * The driver pod reaches serve's control port and nothing else; the other serves (by pod and by the nodes'
     * addresses, since host-network pods send from those) reach control and the data ports of the mesh's plan.
     */
    @Test
    void theNetworkPolicyLetsTheDriverReachControlAndTheServesReachEachOther() {
        NetworkPolicy np = get(NetworkPolicy.class, "lossprobe-serve");
        DaemonSet ds = get(DaemonSet.class, "lossprobe-serve");
        Map<String, String> serveLabels = ds.getSpec().getSelector().getMatchLabels();
        assertThat(np.getSpec().getPodSelector().getMatchLabels()).isEqualTo(serveLabels);
        assertThat(np.getSpec().getPolicyTypes()).containsExactly("Ingress");
        assertThat(np.getSpec().getIngress()).hasSize(2);
        var driver = np.getSpec().getIngress().get(0);
        assertThat(driver.getFrom()).hasSize(1);
        assertThat(driver.getFrom().get(0).getPodSelector().getMatchLabels()).isEqualTo(get(CronJob.class,
            "lossprobe-mesh").getSpec().getJobTemplate().getSpec().getTemplate().getMetadata().getLabels());
        assertThat(driver.getPorts()).as("control only").singleElement().satisfies(p -> {
            assertThat(p.getProtocol()).isEqualTo("TCP");
            assertThat(p.getPort().getIntVal()).isEqualTo(serve().port);
            assertThat(p.getEndPort()).isNull();
        });
        var serves = np.getSpec().getIngress().get(1);
        assertThat(serves.getFrom()).anySatisfy(f -> assertThat(f.getPodSelector().getMatchLabels())
            .isEqualTo(serveLabels));
        assertThat(serves.getFrom()).as("the nodes' addresses").anySatisfy(f -> {
            assertThat(f.getIpBlock()).isNotNull();
            assertThat(f.getIpBlock().getCidr()).isNotBlank();
        });
        assertThat(serves.getPorts()).anySatisfy(p -> {
            assertThat(p.getProtocol()).isEqualTo("TCP");
            assertThat(p.getPort().getIntVal()).isEqualTo(serve().port);
            assertThat(p.getEndPort()).isNull();
        });
        // The mesh's data ports, for each transport's protocol (Aeron and UDP on UDP, TCP on TCP).
        MeshCommand mesh = mesh();
        var plan = mesh.planOptions.plan("10.0.0.6", "stream", 0, mesh.planOptions.transportOptionsInEffect());
        for (String protocol : List.of("UDP", "TCP")) {
            assertThat(serves.getPorts()).as(protocol + " %d-%d", plan.basePort(), plan.basePort() + plan.ports() - 1)
                .anySatisfy(p -> {
                    assertThat(p.getProtocol()).isEqualTo(protocol);
                    assertThat(plan.basePort()).isGreaterThanOrEqualTo(p.getPort().getIntVal());
                    int last = p.getEndPort() != null ? p.getEndPort() : p.getPort().getIntVal();
                    assertThat(plan.basePort() + plan.ports() - 1).isLessThanOrEqualTo(last);
                });
        }
    }

    private JsonNode kustomization() throws Exception {
        return YAML.readTree(dir.resolve("kustomization.yaml").toFile());
    }

    /**
     * The node the mesh's pod runs on, written once: kustomization.yaml's patch of its nodeSelector (that node's
     * node_exporter serves the textfile).
     */
    private String driverNode() throws Exception {
        List<JsonNode> values = new ArrayList<>();
        for (JsonNode patch : kustomization().path("patches")) {
            if (patch.path("target").path("name").asText().equals("lossprobe-mesh")) {
                for (JsonNode op : YAML.readTree(patch.path("patch").asText())) {
                    assertThat(op.path("path").asText())
                        .isEqualTo("/spec/jobTemplate/spec/template/spec/nodeSelector/kubernetes.io~1hostname");
                    values.add(op.path("value"));
                }
            }
        }
        assertThat(values).as("one node for the mesh in kustomization.yaml").hasSize(1);
        assertThat(values.get(0).isTextual()).isTrue();
        assertThat(kustomization().path("replacements").isMissingNode()).as("nothing to copy").isTrue();
        return values.get(0).asText();
    }

    private List<PodSpec> pods() {
        return List.of(get(DaemonSet.class, "lossprobe-serve").getSpec().getTemplate().getSpec(), meshPod());
    }

    @Test
    void everyPodRunsUnderRuntimeDefaultSeccompAndTheNamespaceAllowsHostNetwork() throws Exception {
        for (PodSpec pod : pods()) {
            assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
            assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
            for (Container c : pod.getContainers()) {
                assertThat(c.getSecurityContext().getSeccompProfile()).as("no container overrides it").isNull();
                assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
            }
        }
        // hostNetwork (and a hostPath) are allowed by Pod Security's "privileged" level only.
        assertThat(pods()).anyMatch(p -> Boolean.TRUE.equals(p.getHostNetwork()));
        assertThat(get(Namespace.class, "lossprobe").getMetadata().getLabels())
            .containsEntry("pod-security.kubernetes.io/enforce", "privileged");
        assertThat(Files.readString(docs())).contains("pod-security.kubernetes.io/enforce: privileged");
    }

    private Path docs() {
        return dir.getParent().getParent().resolve("docs/kubernetes.md");
    }

    @Test
    void serveAndTheMeshHaveTheirOwnPriorityClassThatPreemptsNothing() {
        PriorityClass pc = get(PriorityClass.class, "lossprobe");
        assertThat(pc.getPreemptionPolicy()).isEqualTo("Never");
        assertThat(pc.getGlobalDefault()).isFalse();
        assertThat(pc.getValue()).isPositive().isLessThan(1_000_000_000); // below every system class
        assertThat(pc.getDescription()).isNotBlank();
        for (PodSpec pod : pods()) {
            assertThat(pod.getPriorityClassName()).isEqualTo(pc.getMetadata().getName());
        }
    }

    /**
     * The strict reading can fail: a field the schema does not have, at the top of a PriorityClass or in a
     * PrometheusRule's rule, is refused (the manifests themselves read, as above).
     */
    @Test
    void aFieldTheModelDoesNotKnowIsRefused() throws Exception {
        String pc = Files.readString(dir.resolve("priorityclass.yaml"));
        assertThat(parse(pc, "priorityclass.yaml")).hasSize(1);
        assertThatThrownBy(() -> parse(pc + "valueX: 1\n", "priorityclass.yaml with valueX"))
            .isInstanceOf(AssertionError.class).hasMessageContaining("valueX");
        String rule = Files.readString(dir.resolve("components/prometheus-operator/prometheusrule.yaml"));
        String misspelt = rule.replaceFirst("(?m)^(\\s+)expr: ", "$1exprX: ");
        assertThat(misspelt).isNotEqualTo(rule);
        assertThatThrownBy(() -> parse(misspelt, "prometheusrule.yaml with exprX"))
            .isInstanceOf(AssertionError.class).hasMessageContaining("exprX");
    }

    /**
     * Each JVM's memory limit covers its heap (-Xmx), its in-memory /dev/shm (sizeLimit) and what the JVM takes
     * beyond the heap, and serve's also what its sessions may allocate (--max-sessions x --max-memory); no CPU limit.
     */
    @Test
    void memoryLimitsCoverHeapShmAndSessionsAndNoCpuIsLimited() throws Exception {
        ServeCommand serve = serve();
        var limits = serve.limits();
        Map<String, Long> needed = new TreeMap<>();
        for (PodSpec pod : pods()) {
            for (Container c : pod.getContainers()) {
                assertThat(c.getResources().getLimits()).as(c.getName()).doesNotContainKey("cpu");
                assertThat(c.getResources().getRequests()).as(c.getName()).containsKeys("cpu", "memory");
                long need = heap(c) + JVM_OVERHEAD + shm(pod, c);
                if (c.getName().equals("serve")) {
                    need += limits.maxSessions() * limits.maxMemoryBytes();
                }
                needed.put(c.getName(), need);
                assertThat(bytes(c.getResources().getLimits().get("memory"))).as(c.getName())
                    .isGreaterThanOrEqualTo(need);
                assertThat(bytes(c.getResources().getRequests().get("memory"))).as(c.getName())
                    .isLessThanOrEqualTo(bytes(c.getResources().getLimits().get("memory")));
            }
        }
        assertThat(needed).containsOnlyKeys("serve", "mesh");
        assertThat(needed.get("serve")).as("the sum docs/kubernetes.md gives").isEqualTo(896L << 20);
        // The mesh's plan is one serve accepts under those limits.
        MeshCommand mesh = mesh();
        var options = mesh.planOptions.transportOptionsInEffect();
        var plan = mesh.planOptions.plan("10.0.0.6", "stream", 0, options);
        assertThat(limits.refuse(plan, Transports.available(), options)).isNull();
    }

    private static long heap(Container c) {
        String opts = c.getEnv().stream().filter(e -> e.getName().equals("LOSSPROBE_JAVA_OPTS")).findFirst()
            .orElseThrow(() -> new AssertionError(c.getName() + ": no LOSSPROBE_JAVA_OPTS")).getValue();
        Matcher m = Pattern.compile("-Xmx(\\d+)([kmg])").matcher(opts);
        assertThat(m.find()).as("%s: a fixed heap (-Xmx) in %s", c.getName(), opts).isTrue();
        return Long.parseLong(m.group(1)) << (10 * ("kmg".indexOf(m.group(2)) + 1));
    }

    private static long shm(PodSpec pod, Container c) {
        return c.getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/dev/shm")).findFirst()
            .map(m -> pod.getVolumes().stream().filter(v -> v.getName().equals(m.getName())).findFirst()
                .orElseThrow().getEmptyDir())
            .map(e -> {
                assertThat(e.getMedium()).isEqualTo("Memory");
                return bytes(e.getSizeLimit());
            }).orElse(0L);
    }

    private static long bytes(Quantity q) {
        assertThat(q).isNotNull();
        return Quantity.getAmountInBytes(q).setScale(0, java.math.RoundingMode.UP).longValueExact();
    }

    @Test
    void noProbeConnectsToServe() {
        for (PodSpec pod : pods()) {
            for (Container c : pod.getContainers()) {
                for (Probe p : java.util.Arrays.asList(c.getReadinessProbe(), c.getLivenessProbe(),
                    c.getStartupProbe())) {
                    if (p != null) {
                        assertThat(p.getTcpSocket()).as(c.getName()).isNull();
                        assertThat(p.getHttpGet()).as(c.getName()).isNull();
                        assertThat(p.getGrpc()).as(c.getName()).isNull();
                    }
                }
            }
        }
    }

    /** The hostPath textfile directory, created root-owned, is handed to the pod's group before the mesh writes. */
    @Test
    void theTextfileDirectoryIsMadeWritableForThePodsGroup() {
        PodSpec pod = meshPod();
        Volume textfile = pod.getVolumes().stream().filter(v -> v.getName().equals("textfile")).findFirst()
            .orElseThrow();
        assertThat(textfile.getHostPath().getType()).isEqualTo("DirectoryOrCreate");
        assertThat(pod.getInitContainers()).hasSize(1);
        Container init = pod.getInitContainers().get(0);
        String dirInInit = init.getVolumeMounts().stream().filter(m -> m.getName().equals("textfile")).findFirst()
            .orElseThrow().getMountPath();
        long group = pod.getSecurityContext().getRunAsGroup();
        assertThat(init.getCommand()).containsExactly("/bin/sh", "-c", "chgrp " + group + " " + dirInInit
            + " && chmod g+rwx " + dirInInit);
        assertThat(init.getSecurityContext().getRunAsUser()).isZero();
        assertThat(init.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(init.getSecurityContext().getCapabilities().getAdd()).containsExactlyInAnyOrder("CHOWN", "FOWNER");
        assertThat(init.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(init.getImage()).isEqualTo(pod.getContainers().get(0).getImage());
        Container mesh = pod.getContainers().get(0);
        assertThat(mesh.getSecurityContext().getRunAsUser()).as("the pod's uid").isNull();
        assertThat(mesh.getSecurityContext().getRunAsGroup()).as("the pod's group").isNull();
    }

    /** The floor in one place (kustomization.yaml), the newest field used, and what docs/kubernetes.md says. */
    @Test
    void theVersionFloorIsWrittenOnceAndIsTheNewestFieldUsed() throws Exception {
        String floor = kustomization().path("commonAnnotations").path("lossprobe.io/minimum-kubernetes-version")
            .asText();
        assertThat(floor).matches("1\\.\\d+");
        Map<String, String> newer = new TreeMap<>();
        for (String field : fieldsUsed) {
            if (FIELDS_SINCE.containsKey(field)) {
                newer.put(field, FIELDS_SINCE.get(field));
            }
        }
        assertThat(newer).containsEntry("CronJobSpec.timeZone", "1.27");
        newer.forEach((field, since) -> assertThat(minor(since)).as(field).isLessThanOrEqualTo(minor(floor)));
        assertThat(newer.values().stream().mapToInt(KubernetesManifestsTest::minor).max().orElseThrow())
            .as("the floor is the newest field's release, %s", newer).isEqualTo(minor(floor));
        String docs = Files.readString(docs());
        assertThat(docs).contains("Kubernetes " + floor + " or newer");
    }

    /** Lines of "RELEASE Type.field ...": each field and its release. */
    private static Map<String, String> since(String table) {
        Map<String, String> out = new TreeMap<>();
        for (String line : table.strip().split("\n")) {
            String[] words = line.strip().split("\\s+");
            for (int i = 1; i < words.length; i++) {
                out.put(words[i], words[0]);
            }
        }
        return out;
    }

    private static int minor(String version) {
        return Integer.parseInt(version.substring(version.indexOf('.') + 1));
    }

    /** The PrometheusRule carries the rules that promtool tests: the same groups, rule for rule. */
    @Test
    void thePrometheusRuleHasTheSameRulesAsTheRulesFile() throws Exception {
        PrometheusRule rule = get(PrometheusRule.class, "lossprobe");
        for (RuleGroup group : rule.getSpec().getGroups()) {
            assertThat(group.getName()).isNotBlank();
            assertThat(group.getRules()).as(group.getName()).isNotEmpty();
            for (Rule r : group.getRules()) {
                assertThat(r.getExpr()).as("%s: an expr", group.getName()).isNotNull();
                assertThat(r.getAlert() != null ^ r.getRecord() != null).as("%s: alert or record", group.getName())
                    .isTrue();
            }
        }
        // As the model holds them (every field in it, nothing in additionalProperties), written back out.
        JsonNode groups = YAML.valueToTree(rule.getSpec()).path("groups");
        JsonNode file = YAML.readTree(dir.getParent().resolve("prometheus/lossprobe-rules.yml").toFile());
        assertThat(groups).isEqualTo(file.path("groups"));
        assertThat(groups.get(0).path("rules")).hasSizeGreaterThan(1);
        JsonNode component = YAML.readTree(dir.resolve("components/prometheus-operator/kustomization.yaml")
            .toFile());
        assertThat(component.path("kind").asText()).isEqualTo("Component");
        assertThat(component.path("resources").get(0).asText()).isEqualTo("prometheusrule.yaml");
    }

    /**
     * The Dockerfile's base is fully qualified (podman refuses short names) and pinned by digest, through a build
     * argument whose default is a placeholder, never a made-up digest; the image has the OCI labels.
     */
    @Test
    void theImageBaseIsFullyQualifiedAndPinnedAndLabelled() throws Exception {
        Path dockerfile = dir.getParent().resolve("container/Dockerfile");
        List<String> lines = Files.readAllLines(dockerfile).stream().filter(l -> !l.startsWith("#")).toList();
        Map<String, String> args = new LinkedHashMap<>();
        String from = null;
        for (String line : lines) {
            Matcher arg = Pattern.compile("ARG (\\w+)=(\\S+)").matcher(line);
            if (from == null && arg.matches()) {
                args.put(arg.group(1), arg.group(2));
            }
            if (line.startsWith("FROM ")) {
                assertThat(from).as("one stage").isNull();
                from = line.substring(5).strip();
            }
        }
        assertThat(from).isEqualTo("${BASE_IMAGE}@${BASE_DIGEST}");
        String image = args.get("BASE_IMAGE");
        assertThat(image.substring(0, image.indexOf('/'))).as("a registry host").contains(".");
        assertThat(image).isEqualTo("docker.io/library/eclipse-temurin:17-jre");
        assertThat(args.get("BASE_DIGEST")).startsWith("sha256:").doesNotMatch("sha256:[0-9a-f]{64}");
        String text = String.join("\n", lines);
        for (String label : List.of("title", "description", "version", "revision", "created", "licenses",
            "base.name", "base.digest")) {
            assertThat(text).contains("org.opencontainers.image." + label + "=");
        }
        String docs = Files.readString(docs());
        assertThat(docs).contains("podman build", "docker build", "BASE_DIGEST");
    }

    /** What {@code kubectl apply -k} would send: kustomize's output reads into the model too (when kubectl is here). */
    @Test
    void theKustomizationBuildsWithTheComponent(@TempDir Path tmp) throws Exception {
        Path kubectl = Stream.of("/usr/bin/kubectl", "/usr/local/bin/kubectl").map(Paths::get)
            .filter(Files::isExecutable).findFirst().orElse(null);
        assumeTrue(kubectl != null, "kubectl not installed");
        Path copy = Files.createDirectories(tmp.resolve("k"));
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Path to = copy.resolve(dir.relativize(f).toString());
                Files.createDirectories(to.getParent());
                Files.copy(f, to);
            }
        }
        // With the optional prometheus-operator component, as docs/kubernetes.md says to add it.
        Files.writeString(copy.resolve("kustomization.yaml"), "components:\n  - components/prometheus-operator\n",
            java.nio.file.StandardOpenOption.APPEND);
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
        CronJob mesh = (CronJob) rendered.stream().filter(r -> r instanceof CronJob
            && r.getMetadata().getName().equals("lossprobe-mesh")).findFirst().orElseThrow();
        assertThat(mesh.getSpec().getJobTemplate().getSpec().getTemplate().getSpec().getNodeSelector())
            .containsExactly(Map.entry("kubernetes.io/hostname", driverNode()));
        rendered.forEach(r -> assertThat(r.getMetadata().getAnnotations()).as(r.getKind())
            .containsKey("lossprobe.io/minimum-kubernetes-version"));
    }
}
