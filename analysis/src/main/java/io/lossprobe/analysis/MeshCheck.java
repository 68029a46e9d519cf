package io.lossprobe.analysis;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A policy applied to every pair of a mesh: each measured pair is checked as {@code lossprobe check} checks a run
 * ({@link PolicyCheck}); a pair that did not run (failed, skipped, missing) fails its check, since a mesh is there to
 * find the host that cannot be reached.
 */
public final class MeshCheck {
    private final Policy policy;

    public MeshCheck(Policy policy) {
        this.policy = policy;
    }

    /**
     * One pair's outcome.
     *
     * @param report  the policy's evaluations of the pair's run, or null when it has no measurements
     * @param problem why the pair has no measurements, or null
     */
    public record PairCheck(MeshResult.Pair pair, CheckReport report, String problem) {
        public boolean passed() {
            return problem == null && report.passed();
        }

        /** "a -> b". */
        public String label() {
            return pair.source() + " -> " + pair.target();
        }
    }

    /** Every pair's check, in the mesh's order. */
    public record Outcome(MeshResult mesh, List<PairCheck> pairs) {
        public boolean passed() {
            return pairs.stream().allMatch(PairCheck::passed);
        }

        public List<PairCheck> failures() {
            return pairs.stream().filter(p -> !p.passed()).toList();
        }
    }

    public Outcome check(MeshResult mesh) {
        List<PairCheck> out = new ArrayList<>();
        for (MeshResult.Pair p : mesh.pairs()) {
            if (!p.measured()) {
                out.add(new PairCheck(p, null, "did not run (" + p.status()
                    + (p.error() == null ? "" : ": " + p.error()) + ")"));
                continue;
            }
            LoadedResult run = new LoadedResult(Path.of(p.source() + "->" + p.target()), p.result());
            out.add(new PairCheck(p, new PolicyCheck(policy).check(run, Optional.empty()), null));
        }
        return new Outcome(mesh, out);
    }

    /** JUnit XML: one test case per pair and limit (and one for a pair that did not run). */
    public static String junit(Outcome outcome) {
        List<String[]> cases = new ArrayList<>(); // classname, name, failure message or null
        for (PairCheck p : outcome.pairs()) {
            String cls = "lossprobe.mesh." + p.pair().source() + "." + p.pair().target();
            if (p.report() == null) {
                cases.add(new String[] {cls, "ran", p.problem()});
                continue;
            }
            for (CheckReport.Evaluation e : p.report().evaluations()) {
                cases.add(new String[] {cls, e.transport() + "." + e.level() + "." + e.metric(),
                    e.passed() ? null : p.label() + " " + e.message()});
            }
        }
        long failures = cases.stream().filter(c -> c[2] != null).count();
        StringBuilder sb = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        sb.append("<testsuite name=\"lossprobe mesh check\" tests=\"").append(cases.size()).append("\" failures=\"")
            .append(failures).append("\" errors=\"0\" skipped=\"0\" timestamp=\"")
            .append(Fmt.html(String.valueOf(outcome.mesh().startedAt()))).append("\">\n");
        for (String[] c : cases) {
            sb.append("  <testcase classname=\"").append(Fmt.html(c[0])).append("\" name=\"").append(Fmt.html(c[1]))
                .append('"');
            if (c[2] == null) {
                sb.append("/>\n");
            } else {
                sb.append(">\n    <failure message=\"").append(Fmt.html(c[2])).append("\" type=\"threshold\">")
                    .append(Fmt.html(c[2])).append("</failure>\n  </testcase>\n");
            }
        }
        return sb.append("</testsuite>\n").toString();
    }
}
