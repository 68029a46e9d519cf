#!/usr/bin/env python3
# The default mode's floor, two lossprobe jars side by side: floor_ab.py OLD.jar NEW.jar [ROUNDS]. Each round runs
# 48 flows and 1 flow at 30k/s with each jar (the order flipped every round) and sockperf under-load at 30k/s,
# with bench.py's commands, and prints delay p50/p99, transit p50 and process CPU of each; the rounds go to
# /tmp/floorab.json.
import sys, os, json, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench
jars = {'old': sys.argv[1], 'new': sys.argv[2]}
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
dur = 3
lps = {}
for k, j in jars.items():
    d = tempfile.mkdtemp(prefix='floor-%s-' % k)
    lps[k] = bench.Lossprobe(j, d, dur, [])
rows = []
for r in range(rounds):
    order = ['new', 'old'] if r % 2 == 0 else ['old', 'new']
    res = {}
    for k in order:
        res[k + '48'] = lps[k].latency('stream', 48, '30k', 'default')
        res[k + '1'] = lps[k].latency('stream', 1, '30k', 'default')
    res['sockperf'] = bench.sockperf_under_load(dur, 30000)
    line = 'round %d load %.2f:' % (r + 1, bench.load())
    for k in ('old48', 'new48', 'old1', 'new1'):
        v = res[k]
        if 'error' in v:
            line += ' %s ERROR %s' % (k, v['error'][:100]); continue
        line += ' | %s delay p50 %.1f p99 %.1f transit %.1f cpu %.0f' % (k, v['p50Us'], v.get('p99Us', 0), v['transitP50Us'], v['cpuPercent'])
    line += ' | sockperf p50 %.1f p99 %.1f' % (res['sockperf'].get('p50Us', -1), res['sockperf'].get('p99Us', -1))
    print(line, flush=True)
    rows.append(res)
json.dump(rows, open('/tmp/floorab.json', 'w'), indent=1)
