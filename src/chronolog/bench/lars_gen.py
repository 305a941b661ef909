# ruff: noqa
# Shipped with chronolog so that `chronolog bench lars` needs no file outside the package.
# Origin: the public LARS workload generator of the project's shared benchmark folder
# (shared/bench/lars/gen.py, stdlib only); the code below is that file unchanged, and
# tests/bench/test_bench_lars.py checks that both still write the same workloads.
#!/usr/bin/env python3
"""Deterministic LARS benchmark workload generator (python3 stdlib only).

usage: gen.py WORKLOAD [--win W] [--facts N] [--tps T] [--seed S] [--rules K] [--out DIR]

Writes into DIR (default ./out/WORKLOAD_w{W}_n{N}_t{T}):
  program.lars   chronolog native LARS (Ticker rule syntax)
  program.laser  the same program in Laser's syntax (time_win/diamond/box/@)
  stream.jsonl   the stream, CONTRACT section 2 ({"t":..,"pred":..,"args":[..]} + {"t":T} ticks)
  stream.laser   the stream for peers/lars/laser_run.py: one fact per line "T pred arg1 arg2 ..."
                 (Laser has no stream-file format of its own: its streams are Python classes)
Workloads: diamond box join multi cooling p_n pprime_n best worst chain tickerA tickerB
"""
import argparse
import json
import os
import random


def lars_atom(p, args):
    return p if not args else "%s(%s)" % (p, ",".join(str(a) for a in args))

# ---------------------------------------------------------------- workloads
# Each returns (lars_rules, laser_rules_or_None, facts_iter(t) -> list[(pred,args)])

def w_diamond(a, rnd):      # Laser (seed 003) evalDiamond, RDFStream1-like
    W, N = a.win, a.facts
    lars = ["q(X,Y) :- p(X,Y) [%d]." % W]
    laser = ["q(X,Y) :- time_win(%d, 0, 1, diamond(p(X,Y)))" % W]
    def facts(t):
        return [("p", ["c%d" % (t * N + i), "c%d" % (t * N + i + 1)]) for i in range(N)]
    return lars, laser, facts

def w_box(a, rnd):          # Laser evalBox1: z(X) :- box p(X); values from [0, N/3]
    W, N = a.win, a.facts
    lars = ["z(X) :- p(X) always [%d]." % W]
    laser = ["z(X) :- time_win(%d, 0, 1, box(p(X)))" % W]
    hi = N // 3 + 1
    def facts(t):
        return [("p", [v]) for v in sorted({rnd.randint(0, hi) for _ in range(N)})]
    return lars, laser, facts

def w_join(a, rnd):         # Laser evalSingleJoin, RDFStream2-like chain p(c_k, c_k+1)
    W, N = a.win, a.facts
    lars = ["q(X,Z) :- p(X,Y) [%d], p(Y,Z) [%d]." % (W, W)]
    laser = ["q(X,Z) :- time_win(%d, 0, 1, diamond(p(X,Y))) and time_win(%d, 0, 1, diamond(p(Y,Z)))" % (W, W)]
    def facts(t):
        return [("p", ["c%d" % (t * N + i), "c%d" % (t * N + i + 1)]) for i in range(N)]
    return lars, laser, facts

def w_multi(a, rnd):        # Laser evalMultipleRules: K copies of the join rule (distinct heads q1..qK here)
    W, N, K = a.win, a.facts, a.rules
    lars = ["q%d(X,Z) :- p(X,Y) [%d], p(Y,Z) [%d]." % (k, W, W) for k in range(1, K + 1)]
    laser = ["q%d(X,Z) :- time_win(%d, 0, 1, diamond(p(X,Y))) and time_win(%d, 0, 1, diamond(p(Y,Z)))" % (k, W, W)
             for k in range(1, K + 1)]
    _, _, facts = w_join(a, rnd)
    return lars, laser, facts

def w_cooling(a, rnd):      # Laser evalCoolingSystem r1-r9, temp(V) with V in [0,200]
    W, N = a.win, a.facts
    lars = [
        "steam(V) at T :- temp(V) at T [%d], V >= 100." % W,
        "liquid(V) at T :- temp(V) at T [%d], V < 100, V >= 1." % W,
        "isSteam at T :- steam(V) at T [%d]." % W,
        "isLiquid at T :- liquid(V) at T [%d]." % W,
        "alarm :- isSteam always [%d]." % W,
        "normal :- isLiquid always [%d]." % W,
        "veryHot(T) :- steam(V) at T [%d], V >= 150." % W,
        "veryCold(T) :- liquid(V) at T [%d], V = 1." % W,
        "freeze :- not alarm, not normal.",
    ]
    laser = [
        "@(T, steam(V)) :- time_win(%d, 0, 1, @(T, (temp(V)))) and COMP(>=, V, 100)" % W,
        "@(T, liquid(V)) :- time_win(%d, 0, 1, @(T, temp(V))) and COMP(<, V, 100) and COMP(>=, V, 1)" % W,
        "@(T, isSteam) :- time_win(%d, 0, 1, @(T, steam(V)))" % W,
        "@(T, isLiquid)  :- time_win(%d, 0, 1, @(T, liquid(V)))" % W,
        "alarm :- time_win(%d, 0, 1, box(isSteam))" % W,
        "normal :- time_win(%d, 0, 1, box(isLiquid))" % W,
        "veryHot(T) :- time_win(%d,0,1, @(T, steam(V))) and COMP(>=, V, 150)" % W,
        "veryCold(T) :- time_win(%d,0,1, @(T, liquid(V))) and COMP(=, V, 1)" % W,
        "freeze :- not(alarm) and not(normal)",
    ]
    def facts(t):
        return [("temp", [v]) for v in sorted({rnd.randint(0, 200) for _ in range(N)})]
    return lars, laser, facts

def _pa_stream(N, with_q):
    def facts(t):
        out = [("p", ["a%d" % i, "a%d" % i]) for i in range(1, N + 1)]
        if with_q(t):
            out += [("q", ["a%d" % i, "a%d" % i]) for i in range(1, N + 1)]
        return out
    return facts

def w_p_n(a, rnd):          # Laser2 (seed 001) P_n: [n] diamond p(X,Y) -> q(X,Y)
    W, N = a.win, a.facts
    lars = ["q(X,Y) :- p(X,Y) [%d]." % W]
    laser = ["q(X,Y) :- time_win(%d, 0, 1, diamond(p(X,Y)))" % W]
    return lars, laser, _pa_stream(N, lambda t: False)

def w_pprime_n(a, rnd):     # Laser2 P'_n: [n] box p(X,Y) -> q(X,Y)
    W, N = a.win, a.facts
    lars = ["q(X,Y) :- p(X,Y) always [%d]." % W]
    laser = ["q(X,Y) :- time_win(%d, 0, 1, box(p(X,Y)))" % W]
    return lars, laser, _pa_stream(N, lambda t: False)

def w_best(a, rnd):         # Laser2 best case: [n]dia p, [n]box q -> m ; no q-facts when t mod n == 0
    W, N = a.win, a.facts
    lars = ["m(X,Y) :- p(X,Y) [%d], q(X,Y) always [%d]." % (W, W)]
    laser = ["m(X,Y) :- time_win(%d, 0, 1, diamond(p(X,Y))) and time_win(%d, 0, 1, box(q(X,Y)))" % (W, W)]
    return lars, laser, _pa_stream(N, lambda t: t % W != 0)

def w_worst(a, rnd):        # Laser2 worst case: [10]dia p, [n]box q -> m, n in {1,2,3}; never q
    W, N = a.win, a.facts
    lars = ["m(X,Y) :- p(X,Y) [10], q(X,Y) always [%d]." % W]
    laser = ["m(X,Y) :- time_win(10, 0, 1, diamond(p(X,Y))) and time_win(%d, 0, 1, box(q(X,Y)))" % W]
    return lars, laser, _pa_stream(N, lambda t: False)

def w_chain(a, rnd):        # Laser2 multiple rules: r1 [n]dia p & [n]box q -> h1; h_i -> h_{i+1} .. h_w
    W, N, K = a.win, a.facts, a.rules
    lars = ["h1(X,Y) :- p(X,Y) [%d], q(X,Y) always [%d]." % (W, W)]
    laser = ["h1(X,Y) :- time_win(%d, 0, 1, diamond(p(X,Y))) and time_win(%d, 0, 1, box(q(X,Y)))" % (W, W)]
    for i in range(1, K):
        lars.append("h%d(X,Y) :- h%d(X,Y)." % (i + 1, i))
        laser.append("h%d(X,Y) :- h%d(X,Y)" % (i + 1, i))
    return lars, laser, _pa_stream(N, lambda t: False)

def w_tickerA(a, rnd):      # Ticker (seed 000) Scenario A caching, setup A2 (tuple windows r1-r3)
    W = a.win
    lars = [
        "high at T :- value(V), alpha(V) at T [%d #], leq(18,V)." % W,
        "mid at T :- value(V), alpha(V) at T [%d #], leq(12,V), lt(V,18)." % W,
        "low at T :- value(V), alpha(V) at T [%d #], lt(V,12)." % W,
        "lfu :- high always [%d]." % W,
        "lru :- mid always [%d]." % W,
        "fifo :- low always [%d], rtm50 [%d]." % (W, W),
        "done :- lfu.", "done :- lru.", "done :- fifo.",
        "random :- not done.",
        "value(5).", "value(15).", "value(25).",
    ]
    state = {"v": 15}
    def facts(t):
        out = []
        if rnd.random() < 0.5:      # alpha drifts between levels
            state["v"] = rnd.choice([5, 15, 25]) if rnd.random() < 0.1 else state["v"]
            out.append(("alpha", [state["v"]]))
        if rnd.random() < 0.1:
            out.append(("rtm50", []))
        return out
    return lars, None, facts

EDGES = [(i, i + 1) for i in range(10)] + [(0, 10), (1, 10), (2, 8), (3, 7)]

def w_tickerB(a, rnd):      # Ticker Scenario B content retrieval, Abilene 11 nodes, setup B1
    W = a.win
    lars = [
        "need(I,N) :- item(I), node(N), req(I,N) [%d]." % W,
        "avail(I,N) :- item(I), node(N), cache(I,N) [%d]." % W,
        "get(I,N,M) :- source(I,N,M), not n_get(I,N,M).",
        "n_get(I,N,M) :- source(I,N,M), source(I,N,M2), M != M2, get(I,N,M2).",
        "source(I,N,M) :- need(I,N), not avail(I,N), avail(I,M), reach(N,M), qual(M,L), not betterSource(I,N,L).",
        "betterSource(I,N,L) :- need(I,N), avail(I,M), reach(N,M), qual(M,L2), lev(L), L2 > L.",
        "reach(N,M) :- conn(N,M).",
        "reach(N,M) :- reach(N,M0), conn(M0,M), N != M.",
        "conn(N,M) :- edge(N,M), not down(M) [%d]." % W,
        "qual(N,L) :- node(N), lev(L), lev(L2), qLev(N,L) [%d], not higherQual(N,L)." % W,
        "higherQual(N,L) :- node(N), lev(L), lev(L2), qLev(N,L2) [%d], L2 > L." % W,
        "lev(0).", "lev(1).", "lev(2).", "item(0).", "item(1).",
    ] + ["node(%d)." % n for n in range(11)] + \
        ["edge(%d,%d). edge(%d,%d)." % (x, y, y, x) for x, y in EDGES]
    def facts(t):
        out = []
        for i in (0, 1):
            if rnd.random() < 0.1:
                out.append(("req", [i, rnd.randrange(11)]))
        if rnd.random() < 0.1:
            out.append(("cache", [rnd.randrange(2), rnd.randrange(11)]))
        if rnd.random() < 0.1:
            out.append(("down", [rnd.randrange(11)]))
        for n in range(11):
            if t == 0 or rnd.random() < 3.0 / max(W, 3):
                out.append(("qLev", [n, rnd.randrange(3)]))
        return out
    return lars, None, facts

WORKLOADS = {"diamond": w_diamond, "box": w_box, "join": w_join, "multi": w_multi,
             "cooling": w_cooling, "p_n": w_p_n, "pprime_n": w_pprime_n, "best": w_best,
             "worst": w_worst, "chain": w_chain, "tickerA": w_tickerA, "tickerB": w_tickerB}

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workload", choices=sorted(WORKLOADS))
    ap.add_argument("--win", type=int, default=20)
    ap.add_argument("--facts", type=int, default=800, help="facts per time point")
    ap.add_argument("--tps", type=int, default=300, help="number of time points 0..T-1")
    ap.add_argument("--rules", type=int, default=10, help="multi: rule copies; chain: chain length w")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    rnd = random.Random("%s/%d" % (a.workload, a.seed))
    lars, laser, facts = WORKLOADS[a.workload](a, rnd)
    out = a.out or os.path.join("out", "%s_w%d_n%d_t%d" % (a.workload, a.win, a.facts, a.tps))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "program.lars"), "w") as f:
        f.write("\n".join(lars) + "\n")
    if laser is not None:
        with open(os.path.join(out, "program.laser"), "w") as f:
            f.write("\n".join(laser) + "\n")
    nf = 0
    with open(os.path.join(out, "stream.jsonl"), "w") as fj, open(os.path.join(out, "stream.laser"), "w") as fl:
        for t in range(a.tps):
            fs = facts(t)
            if not fs:
                fj.write(json.dumps({"t": t}) + "\n")
                fl.write("%d\n" % t)
            for p, args in fs:
                fj.write(json.dumps({"t": t, "pred": p, "args": args}, separators=(",", ":")) + "\n")
                fl.write("%d %s%s\n" % (t, p, "".join(" %s" % x for x in args)))
                nf += 1
    print("%s: %d rules, %d facts over %d time points -> %s" % (a.workload, len(lars), nf, a.tps, out))
    return out

if __name__ == "__main__":
    main()
