#!/usr/bin/env python3
"""The headline figures of several runs of the election benchmark, side by side.

    scripts/bench-compare.py target/bench/election-mariadb.json target/bench/election-mysql.json

Each argument is the JSON one run of `cargo bench --bench election` wrote (scripts/bench.sh runs
one per server kind). Prints one Markdown table: a column per run, a row per figure, for the
sections the runs have (follower, renew, fence, system, sessions), with issue 40's side-by-side
ratios (the tree against the routines before it, the fence against its floor; the spread of the
per-round ratios in brackets). The ratios are each run's own: the
contenders of a section ran side by side on that run's server, so a ratio compares like with
like, while absolute rates compare two servers on one machine at different times.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def throughput_rows(runs, section, what):
    """calls/s of the tree's campaign and its ratio to the recipe, per connection count."""
    rows = []
    levels = sorted({r["connections"] for run in runs for r in run["sections"].get(section, {}).get("rows", [])})
    for level in levels:
        rates, ratios = [], []
        for run in runs:
            row = next((r for r in run["sections"].get(section, {}).get("rows", [])
                        if r["connections"] == level and r["contender"] == "campaign (tree)"), None)
            rates.append(fmt(row and row["calls_per_s"], ",.0f"))
            ratios.append(fmt(row and row["ratio_to_recipe"], ".2f") + "x" if row else "n/a")
        rows.append((f"{what}, {level} conn(s): calls/s", rates))
        rows.append((f"{what}, {level} conn(s): ratio to the recipe", ratios))
    return rows


def issue_40_rows(runs, section, what):
    """The tree against the routines before issue 40, and the fence against its floor (same rounds)."""
    rows = []
    pairs = sorted({(r["connections"], r["contender"], r["against"])
                    for run in runs for r in run["sections"].get(section, {}).get("issue_40", [])},
                   key=lambda k: k[0])
    for level, new, old in pairs:
        if "before issue 40" not in old:
            continue
        cells = []
        for run in runs:
            row = next((r for r in run["sections"].get(section, {}).get("issue_40", [])
                        if (r["connections"], r["contender"], r["against"]) == (level, new, old)), None)
            if row is None:
                cells.append("n/a")
                continue
            per = row.get("ratio_per_round") or []
            spread = f" ({min(per):.2f}-{max(per):.2f})" if per else ""
            cells.append(f'{row["ratio"]:.2f}x{spread}')
        rows.append((f"{what}, {level} conn(s): {new} / before issue 40", cells))
    if section == "fence":
        levels = sorted({r["connections"] for run in runs for r in run["sections"].get("fence", {}).get("rows", [])})
        for level in levels:
            for name in ("assert_leader (tree), as FencedTransaction sends it", "assert_leader (tree), one CALL",
                         "no check (START TRANSACTION; UPDATE; COMMIT)"):
                cells = []
                for run in runs:
                    row = next((r for r in run["sections"].get("fence", {}).get("rows", [])
                                if r["connections"] == level and r["contender"] == name), None)
                    per = (row or {}).get("ratio_per_round") or []
                    cells.append("n/a" if row is None else
                                 f'{row["ratio_to_floor"]:.2f}x ({min(per):.2f}-{max(per):.2f})' if per else "n/a")
                rows.append((f"fenced write, {level} conn(s): {name} / floor", cells))
    return rows


def system_rows(runs):
    rows = []
    if not any("system" in run["sections"] for run in runs):
        return rows
    def cell(run, *keys, spec=".4f", scale=1.0):
        v = run["sections"].get("system")
        for k in keys:
            v = v.get(k) if isinstance(v, dict) else None
        return fmt(None if v is None else (int(v) if spec == "d" else v * scale), spec)
    rows.append(("system: services x 3 candidates", [cell(r, "services", spec="d") for r in runs]))
    for who in ("library", "sessions", "recipe"):
        rows.append((f"system, {who}: server CPU ms per service-second",
                     [cell(r, who, "server_cpu_s_per_service_s", spec=".3f", scale=1000.0) for r in runs]))
        rows.append((f"system, {who}: statements per service-second", [cell(r, who, "statements", spec=".2f") for r in runs]))
    rows.append(("system: library CPU / recipe CPU", [cell(r, "cpu_ratio", spec=".2f") + "x" for r in runs]))
    rows.append(("system: sessions CPU / recipe CPU", [cell(r, "sessions_cpu_ratio", spec=".2f") + "x" for r in runs]))
    return rows


def sessions_rows(runs):
    rows = []
    sizes = sorted({s["services"] for run in runs for s in run["sections"].get("sessions", [])})
    for n in sizes:
        per = [next((s for s in run["sections"].get("sessions", []) if s["services"] == n), None) for run in runs]
        rows.append((f"sessions, {n:,} services x 3 nodes: server CPU ms per service-second",
                     [fmt(s and s["server_cpu_s_per_service_s"] and s["server_cpu_s_per_service_s"] * 1000.0, ".4f") for s in per]))
        rows.append((f"sessions, {n:,} services: connections per node", [fmt(s and s["connections_per_node"], ".1f") for s in per]))
        rows.append((f"sessions, {n:,} services: renew_seats p99 ms (leader)", [fmt(s and s["renew_seats_p99_ms_leader"], ".1f") for s in per]))
        rows.append((f"sessions, {n:,} services: failover after a node's crash, s", [fmt(s and s["failover_s"], ".1f") for s in per]))
    return rows


def main(paths):
    runs = [load(p) for p in paths]
    heads = [f'{r["machine"].get("server_version", "?")}' for r in runs]
    print("| figure | " + " | ".join(heads) + " |")
    print("| --- | " + " | ".join("---:" for _ in runs) + " |")
    rows = [("innodb_flush_log_at_trx_commit / log_bin",
             [f'{r["machine"].get("innodb_flush_log_at_trx_commit")} / {r["machine"].get("log_bin")}' for r in runs]),
            ("run date", [r.get("date", "?") for r in runs])]
    rows += throughput_rows(runs, "follower", "follower check")
    rows += throughput_rows(runs, "renew", "leader renew")
    rows += issue_40_rows(runs, "follower", "follower check")
    rows += issue_40_rows(runs, "renew", "leader renew")
    rows += issue_40_rows(runs, "fence", "fenced write")
    rows += system_rows(runs)
    rows += sessions_rows(runs)
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
