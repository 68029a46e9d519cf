package io.lossprobe.analysis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.lossprobe.core.result.JsonProblems;
import io.lossprobe.core.result.ResultFiles;
import io.lossprobe.core.result.RunResult;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/** Reads, writes and merges mesh files ({@link MeshResult}). */
public final class MeshFiles {
    private MeshFiles() {
    }

    /** True when {@code file} is a readable JSON file holding a mesh (not a run's result). */
    public static boolean isMesh(Path file) {
        try {
            JsonNode tree = ResultFiles.mapper().readTree(file.toFile());
            return tree != null && MeshResult.KIND.equals(tree.path("kind").asText());
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Reads a mesh file.
     *
     * @throws InputException with one line naming the file, for missing, malformed or too-new files
     */
    public static MeshResult read(Path file) throws InputException {
        JsonNode tree;
        try {
            tree = ResultFiles.mapper().readTree(file.toFile());
        } catch (java.io.FileNotFoundException | NoSuchFileException e) {
            throw new InputException("cannot read " + file + ": no such file");
        } catch (JsonProcessingException e) {
            throw new InputException(file + " is " + JsonProblems.describe(e));
        } catch (IOException e) {
            throw new InputException("cannot read " + file + ": " + e.getMessage());
        }
        if (tree == null || !MeshResult.KIND.equals(tree.path("kind").asText())) {
            throw new InputException(file + " is not a lossprobe mesh file (no \"kind\": \"" + MeshResult.KIND
                + "\")");
        }
        int version = tree.path("meshSchemaVersion").asInt(0);
        if (version > MeshResult.SCHEMA_VERSION) {
            throw new InputException(file + " has mesh schema version " + version + ", newer than this lossprobe "
                + "reads (" + MeshResult.SCHEMA_VERSION + "); upgrade lossprobe");
        }
        for (JsonNode pair : tree.path("pairs")) {
            int runVersion = pair.path("result").path("schemaVersion").asInt(0);
            if (runVersion > RunResult.SCHEMA_VERSION) {
                throw new InputException(file + ": the result of " + pair.path("source").asText() + " -> "
                    + pair.path("target").asText() + " has schema version " + runVersion + ", newer than this "
                    + "lossprobe reads (" + RunResult.SCHEMA_VERSION + "); upgrade lossprobe");
            }
        }
        try {
            return ResultFiles.mapper().treeToValue(tree, MeshResult.class);
        } catch (JsonProcessingException e) {
            throw new InputException(file + " is not a readable mesh file: " + JsonProblems.describe(e));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new InputException(file + " is not a readable mesh file: " + LoadedResult.oneLine(e.getMessage()));
        }
    }

    /** Writes atomically (a reader never sees half a file). */
    public static void write(Path file, MeshResult mesh) throws IOException {
        ResultFiles.writeAtomically(file, ResultFiles.mapper().writeValueAsBytes(mesh));
    }

    /** Reads every file and merges them into one mesh (a single file is returned merged too: missing pairs marked). */
    public static MeshResult readAll(List<Path> files) throws InputException {
        List<MeshResult> meshes = new ArrayList<>();
        for (Path f : files) {
            meshes.add(read(f));
        }
        return merge(meshes, files);
    }

    /**
     * One mesh from the shares of several sources: the union of their pairs in the schedule's order, and for every
     * planned pair whose source reported nothing, a {@link MeshResult#MISSING} entry.
     *
     * @param names where each mesh came from, for messages
     * @throws InputException when the files are of different meshes (other hosts or another schedule) or two
     *                        files both hold the same pair
     */
    public static MeshResult merge(List<MeshResult> meshes, List<?> names) throws InputException {
        if (meshes.isEmpty()) {
            throw new InputException("no mesh files to merge");
        }
        MeshResult first = meshes.get(0);
        Map<String, MeshResult.Pair> byKey = new LinkedHashMap<>();
        Map<String, Object> heldBy = new LinkedHashMap<>();
        Set<String> sources = new LinkedHashSet<>();
        for (int i = 0; i < meshes.size(); i++) {
            MeshResult m = meshes.get(i);
            Object name = names.size() > i ? names.get(i) : "mesh " + (i + 1);
            if (!m.hosts().equals(first.hosts()) || !Objects.equals(plannedOf(m), plannedOf(first))) {
                throw new InputException(name + " is from another mesh than " + names.get(0)
                    + " (different hosts or schedule): merge only the files of one mesh run");
            }
            sources.addAll(m.sources());
            for (MeshResult.Pair p : m.pairs()) {
                if (MeshResult.MISSING.equals(p.status())) {
                    continue;
                }
                String key = key(p.source(), p.target());
                if (byKey.containsKey(key)) {
                    throw new InputException(name + " and " + heldBy.get(key) + " both hold " + p.source() + " -> "
                        + p.target() + ": merge each source's file once");
                }
                byKey.put(key, p);
                heldBy.put(key, name);
            }
        }
        List<MeshResult.Pair> pairs = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (MeshResult.Planned planned : plannedOf(first)) {
            String key = key(planned.source(), planned.target());
            seen.add(key);
            MeshResult.Pair p = byKey.get(key);
            pairs.add(p != null ? p : new MeshResult.Pair(planned.source(), planned.target(), planned.round(),
                MeshResult.MISSING, "no result from " + planned.source() + " (its own 'lossprobe mesh' did not run "
                    + "or its file was not merged)", null, null, null, null, null, null));
        }
        byKey.forEach((key, p) -> {
            if (!seen.contains(key)) {
                pairs.add(p); // a file without a schedule (not written by lossprobe mesh): keep what it has
            }
        });
        String started = meshes.stream().map(MeshResult::startedAt).filter(Objects::nonNull)
            .min(Comparator.naturalOrder()).orElse(first.startedAt());
        String finished = meshes.stream().map(MeshResult::finishedAt).filter(Objects::nonNull)
            .max(Comparator.naturalOrder()).orElse(first.finishedAt());
        List<String> orderedSources = first.hosts().stream().map(MeshResult.Host::name).filter(sources::contains)
            .toList();
        return new MeshResult(MeshResult.KIND, MeshResult.SCHEMA_VERSION, first.tool(), started, finished,
            first.selection(), first.hosts(), orderedSources, first.schedule(), pairs);
    }

    private static List<MeshResult.Planned> plannedOf(MeshResult m) {
        return m.schedule() == null ? List.of() : m.schedule().planned();
    }

    private static String key(String source, String target) {
        return source + "\u0000" + target;
    }
}
