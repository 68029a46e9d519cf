package io.lossprobe.cli;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Set;

/**
 * Packs a mesh's pairs into rounds in which no host takes part in more than one pair (it neither sends nor
 * receives twice, nor both at once), so each pair's counters, CPU and link are its own, with at most
 * {@code maxParallel} pairs per round. First fit in the order given: {@link MeshPairs} lists pairs so that this
 * is optimal for a full mesh and a ring.
 */
final class MeshSchedule {
    private MeshSchedule() {
    }

    /** @param maxParallel at most this many pairs per round; 0 for no limit beyond one pair per host */
    static List<List<MeshPairs.Link>> rounds(List<MeshPairs.Link> pairs, int maxParallel) {
        if (maxParallel < 0) {
            throw new IllegalArgumentException("--parallel must be 0 (no limit) or more");
        }
        LinkedList<MeshPairs.Link> left = new LinkedList<>(pairs);
        Set<String> hosts = new HashSet<>();
        pairs.forEach(l -> {
            hosts.add(l.source());
            hosts.add(l.target());
        });
        int fullRound = hosts.size() / 2; // every host busy: nothing more fits
        List<List<MeshPairs.Link>> rounds = new ArrayList<>();
        while (!left.isEmpty()) {
            List<MeshPairs.Link> round = new ArrayList<>();
            Set<String> busy = new HashSet<>();
            var it = left.iterator();
            while (it.hasNext() && round.size() < fullRound && (maxParallel == 0 || round.size() < maxParallel)) {
                MeshPairs.Link l = it.next();
                if (!busy.contains(l.source()) && !busy.contains(l.target())) {
                    busy.add(l.source());
                    busy.add(l.target());
                    round.add(l);
                    it.remove();
                }
            }
            rounds.add(round);
        }
        return rounds;
    }
}
