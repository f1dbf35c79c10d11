#!/usr/bin/python3
"""Prints one line per attack result (RESULTS/*.json, written by ../shared/redteam's rt.Run) and the
total `redteam: N held, M degraded, K broke`. Exit status 1 if any broke.

  held      the other clients (the prober) saw no failure and a p95 within max(10x idle, 200 ms),
            the daemon stayed up, its peak RSS stayed under the limit
  degraded  some probes failed or were slow, but fewer than half in every phase
  broke     half or more of a phase's probes failed, the daemon died or exited non-zero, or its peak
            RSS passed the limit
`released` says whether the daemon's RSS came back within 64 MiB of its idle peak by the last phase.

usage: verdict.py RESULTS_DIR LIMIT_MIB [NAME...]   (names: the runs to report, in order; default all)"""
import json
import os
import sys


def phase_probes(res):
    out = []
    for name, ph in (res.get("probe") or {}).items():
        n = sum(k["n"] for k in ph.values())
        ok = sum(k["ok"] for k in ph.values())
        p95 = max((k["p95_ms"] or 0) for k in ph.values())
        out.append((name, n, ok, p95))
    return out


def judge(res, limit_mib):
    phases = phase_probes(res)
    base = phases[0][3] if phases and phases[0][3] else 5.0
    later = phases[1:] or phases
    n = sum(p[1] for p in later)
    ok = sum(p[2] for p in later)
    p95 = max((p[3] for p in later), default=0)
    daemon = res.get("daemon") or {}
    rss = [v["rss_max_mib"] for v in daemon.values()]
    peak = max(rss + [res.get("vmhwm_mib") or 0])
    idle = rss[0] if rss else 0
    last = list(daemon.values())[-1]["rss_end_mib"] if daemon else 0
    released = last <= idle + 64
    notes = res.get("notes", {})
    died = res.get("exit_status") not in (0, None) or notes.get("safety_killed_at_rss_mib")
    half_failed = any(p[1] >= 4 and p[2] * 2 <= p[1] for p in later)
    if died or half_failed or peak > limit_mib:
        verdict = "broke"
    elif ok < n or p95 > max(10 * base, 200):
        verdict = "degraded"
    else:
        verdict = "held"
    return verdict, f"probes {ok}/{n} OK, p95 {p95:.0f} ms (idle {base:.0f}), peak RSS {peak:.0f}/{limit_mib} MiB, " \
                    f"released {'yes' if released else 'no'}{', exit ' + str(res.get('exit_status')) if died else ''}"


def main():
    d, limit = sys.argv[1], float(sys.argv[2])
    names = sys.argv[3:] or sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json"))
    counts = {"held": 0, "degraded": 0, "broke": 0}
    for name in names:
        path = os.path.join(d, name + ".json")
        if not os.path.exists(path):
            print(f"  {name:40s} broke     no result (the attack script failed)")
            counts["broke"] += 1
            continue
        with open(path) as f:
            verdict, why = judge(json.load(f), limit)
        counts[verdict] += 1
        print(f"  {name:40s} {verdict:9s} {why}")
    print(f"redteam: {counts['held']} held, {counts['degraded']} degraded, {counts['broke']} broke")
    sys.exit(1 if counts["broke"] else 0)


if __name__ == "__main__":
    main()
