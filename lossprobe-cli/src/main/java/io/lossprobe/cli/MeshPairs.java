package io.lossprobe.cli;

import io.lossprobe.analysis.MeshResult.Host;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

/**
 * Which ordered pairs of hosts a mesh probes, listed in an order {@link MeshSchedule} packs into few rounds.
 *
 * <ul>
 *   <li>{@code full}: every host to every other, N(N-1) pairs, listed round by round of the circle method (a
 *       round-robin tournament), so they pack into 2(N-1) rounds for even N, 2N for odd.</li>
 *   <li>{@code ring}: each host to the next in the list, the last to the first: N pairs, 2 or 3 rounds. Every
 *       host's link is crossed once each way.</li>
 *   <li>{@code targets}: every host to each of a few targets.</li>
 *   <li>{@code sample:K}: each host to K others picked by a seed: K rotations of the list (host i to host i+d for
 *       K distinct offsets d), each of which packs into 2 or 3 rounds. The seed changes the picks, so over nights
 *       every pair gets its turn.</li>
 * </ul>
 */
final class MeshPairs {
    /** Source sends to target. */
    record Link(String source, String target) {
    }

    private MeshPairs() {
    }

    static List<Link> select(List<Host> hosts, String selection, List<String> targets, long seed) {
        String s = selection.strip().toLowerCase(java.util.Locale.ROOT);
        if (s.equals("full")) {
            return full(names(hosts));
        }
        if (s.equals("ring")) {
            return rotation(names(hosts), 1);
        }
        if (s.equals("targets")) {
            return toTargets(hosts, targets);
        }
        if (s.startsWith("sample:")) {
            int k;
            try {
                k = Integer.parseInt(s.substring("sample:".length()));
            } catch (NumberFormatException e) {
                k = -1;
            }
            if (k < 1 || k > hosts.size() - 1) {
                throw new IllegalArgumentException("--pairs sample:K needs K from 1 to " + (hosts.size() - 1)
                    + " (hosts - 1), got '" + selection + "'");
            }
            return sample(names(hosts), k, seed);
        }
        throw new IllegalArgumentException("--pairs must be full, ring, targets or sample:K, got '" + selection + "'");
    }

    private static List<String> names(List<Host> hosts) {
        return hosts.stream().map(Host::name).toList();
    }

    /**
     * The circle method: host 0 stays, the others turn one place per round; in each round the two ends of the
     * circle pair off. Every unordered pair meets in exactly one of the N-1 rounds (N even; an odd N gets a bye).
     * Each round's pairs are listed one way, then all rounds again the other way.
     */
    static List<Link> full(List<String> names) {
        List<String> circle = new ArrayList<>(names);
        if (circle.size() % 2 == 1) {
            circle.add(null); // the bye
        }
        int n = circle.size();
        List<Link> forward = new ArrayList<>();
        List<Link> backward = new ArrayList<>();
        for (int round = 0; round < n - 1; round++) {
            for (int i = 0; i < n / 2; i++) {
                String a = circle.get(i);
                String b = circle.get(n - 1 - i);
                if (a != null && b != null) {
                    // Alternate who sends first so no host sends in every forward round.
                    boolean flip = (round + i) % 2 == 1;
                    forward.add(flip ? new Link(b, a) : new Link(a, b));
                    backward.add(flip ? new Link(a, b) : new Link(b, a));
                }
            }
            circle.add(1, circle.remove(n - 1));
        }
        forward.addAll(backward);
        return forward;
    }

    /** Host i to host i + offset (mod N). */
    private static List<Link> rotation(List<String> names, int offset) {
        int n = names.size();
        return IntStream.range(0, n).mapToObj(i -> new Link(names.get(i), names.get((i + offset) % n))).toList();
    }

    private static List<Link> sample(List<String> names, int k, long seed) {
        List<Integer> offsets = new ArrayList<>(IntStream.range(1, names.size()).boxed().toList());
        Collections.shuffle(offsets, new Random(seed));
        List<Link> out = new ArrayList<>();
        for (int offset : offsets.subList(0, k).stream().sorted().toList()) {
            out.addAll(rotation(names, offset));
        }
        return out;
    }

    private static List<Link> toTargets(List<Host> hosts, List<String> targets) {
        if (targets == null || targets.isEmpty()) {
            throw new IllegalArgumentException("--pairs targets needs --targets NAME[,NAME...]");
        }
        List<String> names = names(hosts);
        List<String> chosen = new ArrayList<>();
        for (String t : targets) {
            String name = hosts.stream().filter(h -> h.name().equals(t.strip()) || h.address().equals(t.strip()))
                .map(Host::name).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("--targets: '" + t + "' is not one of the hosts"));
            if (!chosen.contains(name)) {
                chosen.add(name);
            }
        }
        // Source-major order, the targets rotated per source, so that a round can keep every target busy.
        List<Link> out = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            for (int j = 0; j < chosen.size(); j++) {
                String target = chosen.get((i + j) % chosen.size());
                if (!target.equals(names.get(i))) {
                    out.add(new Link(names.get(i), target));
                }
            }
        }
        return out;
    }
}
