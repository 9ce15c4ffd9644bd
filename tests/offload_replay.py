"""An independent replay of docs/formats.md, Offload to host memory, checked
against `checkmate check --bandwidth` on random graphs and plans.

    tests/offload_replay.py CHECKMATE [CASES] [SEED]
    tests/offload_replay.py --plan GRAPH PLAN BANDWIDTH SECONDS_PER_COST

Each case: a random training graph (format 1, a random cost_unit), a plan
that computes every node once in file order, frees each value after its
last use and offloads some forward values after their compute and fetches
them back a random number of steps before their first backward use, the
copies placed at random, and sometimes one step dropped or repeated to make
a fault. The replay below is written from the documentation alone; its
time, wait and peaks (or the step at fault) must be check's. TAP, ending
"N passed, M failed".

With --plan, a plan file that solve wrote (GRAPH a graph file in format 1
or linear:N): "same" and exit 0 when the replay gives the time, peak and
host peak the file records, else "differ" and exit 1."""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def graph(rng):
    nf = rng.randint(2, 9)
    nodes = []
    for k in range(nf):
        deps = [i for i in range(k) if rng.random() < 0.3] or ([k - 1] if k else [])
        nodes.append({"name": "f%d" % k, "cost": rng.randint(1, 5),
                      "memory": rng.randint(1, 40), "deps": deps})
    nodes.append({"name": "loss", "cost": 1, "memory": 1, "deps": [nf - 1], "backward": True})
    prev = nf
    for k in reversed(range(nf)):
        nodes.append({"name": "b%d" % k, "cost": rng.randint(1, 8),
                      "memory": rng.randint(1, 40), "deps": sorted({prev, k} | set(nodes[k]["deps"])),
                      "backward": True})
        prev = len(nodes) - 1
    return {"format": "checkmate-graph", "version": 1,
            "cost_unit": rng.choice(sorted(UNITS)), "nodes": nodes}


def plan(g, rng):
    """Checkpoint-all with frees after last uses, some forward values moved
    to the host between their forward and backward uses."""
    nodes = g["nodes"]
    n = len(nodes)
    uses = {k: [u for u in range(n) if k in nodes[u]["deps"]] for k in range(n)}
    out = []  # (op, node)
    fetch_at, early = {}, {}  # value -> compute before which it is fetched; freed after
    for k in range(n):
        out += [("fetch", v) for v, pos in sorted(fetch_at.items()) if pos == k]
        out.append(("compute", k))
        fwd = [u for u in uses[k] if not nodes[u].get("backward")]
        bwd = [u for u in uses[k] if nodes[u].get("backward")]
        if not nodes[k].get("backward") and bwd and rng.random() < 0.6:
            last_fwd = max(fwd) if fwd else k
            if min(bwd) - last_fwd > 1:
                out.append(("offload", k))
                early[k] = last_fwd
                fetch_at[k] = rng.randint(last_fwd + 1, min(bwd))
        out += [("free", v) for v, last in sorted(early.items()) if last == k]
        for d in sorted(set(nodes[k]["deps"]) | {k}):
            if max(uses[d] or [d]) == k:
                out.append(("free", d))
    if rng.random() < 0.25:
        i = rng.randrange(len(out))
        if rng.random() < 0.5:
            del out[i]
        else:
            out.insert(i, out[i])
    return out


def replay(g, steps, bw, spc):
    """docs/formats.md, Offload to host memory; returns (time, wait, peak,
    host peak) or ("fault", step)."""
    nodes = g["nodes"]
    resident, host, done = set(), set(), set()
    ready, copy_end = {}, {}
    t = c = waited = time = wait = 0.0
    live = peak = g.get("fixed_memory", 0)
    hlive = hpeak = 0
    for i, (op, v) in enumerate(steps, 1):
        m = nodes[v]["memory"]
        if op == "compute":
            if v in resident or any(d not in resident for d in nodes[v]["deps"]):
                return ("fault", i)
            start = max([t] + [ready.get(d, 0.0) for d in nodes[v]["deps"]])
            waited += start - t
            t = start + nodes[v]["cost"] * spc
            ready[v] = t
            time, wait = t, waited
            resident.add(v)
            done.add(v)
            live += m
            peak = max(peak, live)
        elif op == "free":
            if v in resident:
                if copy_end.get(v, 0.0) > t:
                    waited += copy_end[v] - t
                    t = copy_end[v]
                resident.discard(v)
                live -= m
            elif v in host:
                host.discard(v)
                hlive -= m
            else:
                return ("fault", i)
        else:
            if op == "offload" and (v not in resident or v in host):
                return ("fault", i)
            if op == "fetch" and (v in resident or v not in host):
                return ("fault", i)
            start = max(t, c)
            c = start + m / bw
            copy_end[v] = c
            if op == "offload":
                host.add(v)
                hlive += m
                hpeak = max(hpeak, hlive)
            else:
                resident.add(v)
                ready[v] = c
                live += m
                peak = max(peak, live)
    if len(done) < len(nodes):
        return ("fault", None)
    return (time, wait, peak, hpeak)


def close(a, b, scale):
    """check prints 9 significant digits."""
    return abs(a - b) <= 1e-8 * max(1.0, scale)


def linear(n):
    """The built-in linear:N (docs/formats.md, GRAPH arguments)."""
    nodes = [{"name": "f%d" % i, "cost": 1, "memory": 1, "deps": [i - 1] if i else []}
             for i in range(n)]
    nodes.append({"name": "loss", "cost": 1, "memory": 1, "deps": [n - 1]})
    for i in reversed(range(n)):
        nodes.append({"name": "b%d" % i, "cost": 1, "memory": 1,
                      "deps": [i, len(nodes) - 1]})
    return {"nodes": nodes}


def check_plan(gfile, pfile, bw, spc):
    """--plan: the replay of a plan file against the figures it records."""
    g = linear(int(gfile[7:])) if gfile.startswith("linear:") else json.load(open(gfile))
    ix = {n["name"]: i for i, n in enumerate(g["nodes"])}
    for n in g["nodes"]:
        n["deps"] = [ix[d] if isinstance(d, str) else d for d in n.get("deps", [])]
    p = json.load(open(pfile))
    r = replay(g, [(s["op"], ix[s["node"]]) for s in p["steps"]], bw, spc)
    same = r[0] != "fault" and close(r[0], p["time"], r[0]) and \
        r[2] == p["peak_memory"] and r[3] == p["host_peak_memory"]
    print("same" if same else "differ", r, p["time"], p["peak_memory"], p["host_peak_memory"])
    return 0 if same else 1


def main():
    if sys.argv[1] == "--plan":
        return check_plan(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
    cm = sys.argv[1]
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 64)
    good = faults = copies = 0
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(cases):
            g = graph(rng)
            steps = plan(g, rng)
            bw = rng.choice([1, 7, 20, 100, 1000])
            copies += any(op != "compute" and op != "free" for op, _ in steps)
            gp, pp = os.path.join(tmp, "g.json"), os.path.join(tmp, "p.json")
            with open(gp, "w") as f:
                json.dump(g, f)
            with open(pp, "w") as f:
                json.dump({"steps": [{"op": op, "node": g["nodes"][v]["name"]}
                                     for op, v in steps]}, f)
            r = subprocess.run([cm, "check", gp, pp, "--bandwidth", str(bw)],
                               capture_output=True, text=True)
            want = replay(g, steps, float(bw), UNITS[g["cost_unit"]])
            if want[0] == "fault":
                faults += 1
                m = re.search(r"step (\d+):", r.stderr)
                got = ("fault", int(m.group(1)) if m else None)
                same = r.returncode == 1 and got == want
            else:
                m = re.search(r"time (\S+) s \((\S+) s waiting for copies\), peak memory "
                              r"(\d+) .*host peak (\d+) ", r.stdout)
                same = (r.returncode == 0 and m is not None
                        and close(float(m.group(1)), want[0], want[0])
                        and close(float(m.group(2)), want[1], want[0])
                        and int(m.group(3)) == want[2] and int(m.group(4)) == want[3])
            good += same
            if not same and len(bad) < 3:
                bad.append((case, want, r.stdout.strip() or r.stderr.strip()))
    ok = good == cases and faults > 0 and copies > cases // 2
    print("%s 1 - the documented replay agrees with check --bandwidth on %d of %d random "
          "plans (%d with copies, %d with a fault)"
          % ("ok" if ok else "not ok", good, cases, copies, faults))
    for b in bad:
        print("# case %d: replay %r, check %r" % b)
    print("1..1\n%d passed, %d failed" % (int(ok), 1 - int(ok)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
