#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz/corpus/<target>/ (seed-*; what the
fuzzers found and kept sits beside them under libFuzzer's hash names).
Run from the repository's top: python3 fuzz/seeds.py. The graphs are our
own small ones and tests/bad/; the shared benchmark graphs are not copied
here (fuzz/run.sh and tests/fuzz_replay.sh read them in place)."""
import json
import os
import shutil


def linear(n, names=True):
    """linear:n as format 1 (docs/formats.md, GRAPH arguments and labels),
    deps by name or by index."""
    nodes = []
    for i in range(n):
        deps = ([f"f{i-1}"] if names else [i - 1]) if i else []
        nodes.append({"name": f"f{i}", "cost": 1, "memory": 1, "deps": deps})
    nodes.append({"name": "loss", "cost": 1, "memory": 1, "backward": True,
                  "deps": [f"f{n-1}"] if names else [n - 1]})
    for i in range(n - 1, -1, -1):
        prev = len(nodes) - 1
        nodes.append({"name": f"b{i}", "cost": 1, "memory": 1, "backward": True,
                      "grad_of": f"f{i}" if names else i,
                      "deps": [f"f{i}", nodes[prev]["name"]] if names else [i, prev]})
    return {"format": "checkmate-graph", "version": 1, "name": f"linear {n}", "nodes": nodes}


def residual():
    """A small residual training graph: a skip connection, sizes and costs
    of real magnitude, fixed memory, a batch size, a unicode name."""
    f = [("in", 10, 1 << 20, []), ("conv1", 385.5, 3 << 20, ["in"]),
         ("conv2", 305, 3 << 20, ["conv1"]), ("add", 1, 3 << 20, ["conv2", "conv1"]),
         ("pool\u00e9", 120, 1 << 20, ["add"]), ("loss", 2, 4, ["pool\u00e9"])]
    nodes = [{"name": a, "cost": c, "memory": m, "deps": d} for a, c, m, d in f]
    nodes[-1]["backward"] = True
    for name, _, m, deps in reversed(f[:-1]):
        users = [x[0] for x in f if name in x[3]]
        nodes.append({"name": name + "_grad", "cost": 2, "memory": m, "backward": True,
                      "grad_of": name, "deps": [name] + [u + "_grad" if u != "loss" else u
                                                        for u in users]})
    return {"format": "checkmate-graph", "version": 1, "name": "res\"block\n",
            "fixed_memory": 553648128, "batch_size": 32, "extra": [1, {"x": None}],
            "nodes": nodes}


def nodelink(g, order=True, int_ids=False):
    """g (format 1) as networkx node-link JSON."""
    ids = {nd["name"]: (i if int_ids else nd["name"]) for i, nd in enumerate(g["nodes"])}
    nodes = [{"id": ids[nd["name"]], "cost_cpu": nd["cost"], "cost_ram": nd["memory"],
              "backward": nd.get("backward", False)} for nd in g["nodes"]]
    links = []
    for i, nd in enumerate(g["nodes"]):
        for d in nd.get("deps", []):
            src = g["nodes"][d]["name"] if isinstance(d, int) else d
            links.append({"source": ids[src], "target": ids[nd["name"]]})
    doc = {"directed": True, "multigraph": False,
           "graph": {"name": g.get("name", ""), "fixed_memory": g.get("fixed_memory", 0)},
           "nodes": list(reversed(nodes)), "links": links}
    if order:
        doc["graph"]["order"] = [ids[nd["name"]] for nd in g["nodes"]]
    return doc


def steps(names):
    return [{"op": op, "node": n} for op, n in names]


def plans():
    """Plans for linear:3 (f0 f1 f2 loss b2 b1 b0), the fuzz_plan graph."""
    all_ = [("compute", "f0"), ("compute", "f1"), ("compute", "f2"), ("compute", "loss"),
            ("compute", "b2"), ("free", "f2"), ("free", "loss"), ("compute", "b1"),
            ("free", "f1"), ("free", "b2"), ("compute", "b0"), ("free", "f0"),
            ("free", "b1"), ("free", "b0")]
    remat = [("compute", "f0"), ("compute", "f1"), ("compute", "f2"), ("free", "f1"),
             ("compute", "loss"), ("compute", "b2"), ("free", "f2"), ("free", "loss"),
             ("compute", "f1"), ("compute", "b1"), ("free", "f1"), ("free", "b2"),
             ("compute", "b0"), ("free", "f0"), ("free", "b1"), ("free", "b0")]
    head = {"format": "checkmate-plan", "version": 1, "graph": "linear:3",
            "strategy": "ilp", "solver": "cbc", "status": "optimal"}
    out = {
        "all": dict(head, budget=6, cost=7, peak_memory=5, steps=steps(all_)),
        "remat": dict(head, budget=4, cost=8, peak_memory=4, lower_bound=8, steps=steps(remat)),
        "index": {"steps": [{"op": op, "node": int(n[1]) if n[0] == "f" else n}
                            for op, n in all_]},
        "overbudget": dict(head, budget=3, steps=steps(all_)),
        "missing-input": {"steps": steps([("compute", "f1")])},
        "double-free": {"graph": "other", "steps": steps([("compute", "f0"), ("free", "f0"),
                                                          ("free", "f0")])},
    }
    return out


def write(target, name, data):
    d = os.path.join("fuzz", "corpus", target)
    os.makedirs(d, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(d, "seed-" + name), mode) as f:
        f.write(data)


def main():
    graphs = {"linear4": linear(4), "linear2-index": linear(2, names=False),
              "residual": residual()}
    for name, g in graphs.items():
        write("fuzz_graph", name + ".json", json.dumps(g, indent=1))
        write("fuzz_strategies", name + ".json", json.dumps(g, indent=1))
    for t in ("fuzz_graph", "fuzz_nodelink"):
        os.makedirs(os.path.join("fuzz", "corpus", t), exist_ok=True)
    for f in sorted(os.listdir("tests/bad")):
        if f.endswith(".json"):
            target = "fuzz_nodelink" if f.startswith("nodelink") else "fuzz_graph"
            shutil.copy(os.path.join("tests/bad", f),
                        os.path.join("fuzz", "corpus", target, "seed-bad-" + f))
    write("fuzz_nodelink", "residual.json", json.dumps(nodelink(residual())))
    write("fuzz_nodelink", "linear3-unordered.json",
          json.dumps(nodelink(linear(3), order=False, int_ids=True)))
    write("fuzz_nodelink", "linear2-ordered.json", json.dumps(nodelink(linear(2)), indent=1))
    for name, p in plans().items():
        write("fuzz_plan", name + ".json", json.dumps(p, indent=1))
    g3 = json.dumps(linear(3))
    for name, p in plans().items():
        write("fuzz_check", name, g3 + "\n--\n" + json.dumps(p))
    write("fuzz_check", "residual", json.dumps(residual()) + "\n--\n" +
          json.dumps({"steps": steps([("compute", "in"), ("compute", "conv1")])}))
    write("fuzz_check", "nodelink", json.dumps(nodelink(linear(2), order=False)) + "\n--\n" +
          json.dumps({"steps": steps([("compute", "f0"), ("free", "f0")])}))
    for i, s in enumerate(["16G", "1.5GB", "80%", "512MiB", "1024", " 2 tb ", "0.5k",
                           "12.345678901234567 TiB", "99999999999999999999999", "7 b",
                           "1e3", "-1G", ".5", "100.%"]):
        write("fuzz_size", f"{i:02d}", s)
    # fuzz_options: a first byte picks the command (0 solve, 1 compare,
    # 2 maxbatch, 3 check, 4 info, 5 show, 6 partition); then one argument
    # a line.
    opts = [(0, ["g.json", "--budget", "16G", "--strategy", "ilp", "--plan", "p.json",
                 "--plan-format", "text", "--time-limit", "60", "--gap", "0.01",
                 "--threads", "2", "--seed", "7", "--samples", "16", "-p", "heuristic=lru",
                 "--lp-method", "dual", "--csv", "-", "--no-header", "--write-lp", "m.lp",
                 "--bound", "-q", "--solver", "glpk"]),
            (0, ["-b", "5", "-s", "dtr", "--param", "heuristic=eqclass", "linear:4"]),
            (0, ["--help"]),
            (0, ["--budget"]),
            (1, ["g.json", "--baselines", "all,dtr", "--ilp", "--approx", "--bound",
                 "--sweep", "6", "--plot", "x.svg", "--csv", "c.csv"]),
            (1, ["--budgets", "13G,14G", "--strategies", "chen-sqrtn,nope"]),
            (2, ["g.json", "--budget", "16G", "--strategies", "all", "--max-overhead", "1.5",
                 "-t", "5"]),
            (3, ["g.json", "p.json", "--budget", "80%", "-q"]),
            (3, ["g.json"]),
            (4, ["-q", "linear:3"]),
            (4, ["--bogus", "a", "b"]),
            (4, ["--json", "-", "g.json"]),
            (5, ["g.json", "p.json", "--budget", "16G", "--plot", "m.svg", "--matrices"]),
            (5, ["g.json", "p.json", "--plot", "m.txt"]),
            (6, ["g.json", "--budget", "60%", "-o", "p.json", "--gap", "0", "--solver", "glpk",
                 "-t", "5", "-q"]),
            (6, ["--solver", "clp", "--budget", "1G"])]
    for i, (c, args) in enumerate(opts):
        write("fuzz_options", f"{i:02d}", bytes([c]) + "\n".join(args).encode())


if __name__ == "__main__":
    main()
