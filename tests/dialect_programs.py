"""Programs the tests share: one small program per dialect, for the tests that hold every
command's options to every dialect (tests/cli/test_run_options.py, test_fleet_options.py,
runtime/backfill/test_backfill_options.py), and the rule pools random upgrade pairs are drawn
from (runtime/test_upgrade.py's property tests, runtime/fleet/test_upgrade_fleet_random.py)."""

from hypothesis import strategies as st

PROGRAMS = {
    "lars": ("q(X) :- p(X) [2].", "p"),
    "laser": ("q(X) :- time_win(2, 0, 1, diamond(p(X)))\n", "p"),
    "mtl": ("Q(X):-Diamondminus[0,2]P(X)\n", "P"),
    "rtec": ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
             "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
             "door(d1).\ngrounding(open(D)=true) :- door(D).\n", "opened"),
}
SUFFIX = {"lars": ".lars", "laser": ".laser", "mtl": ".mtl", "rtec": ".prolog"}
TITLE = {"lars": "LARS", "laser": "LARS", "mtl": "DatalogMTL", "rtec": "RTEC"}

# Upgrade pairs: random subsets of these rules (LARS, DatalogMTL), or the RTEC pair either way.
LARS_RULES = [
    "q(X) :- p(X).",
    "q(X) :- p(X) [2].",
    "q(X) :- p(X) [1 #].",
    "q(X) :- p(X) [3 #].",
    "q(X) :- p(X) always [1].",
    "q(X) :- p(X) [2], not r(X) [1].",
    "q(X) :- r(X) [3].",
    "s(X) :- q(X), not r(X).",
    "s(X) :- p(X), r(X) [2].",
]
MTL_RULES = [
    "Q(X):-Diamondminus[0,2]P(X)",
    "Q(X):-Diamondminus[1,3]P(X)",
    "Q(X):-Boxminus[0,1]P(X)",
    "Q(X):-P(X),R(X)",
    "S(X):-Diamondminus[0,1]Q(X)",
    "S(X):-R(X)",
]
RTEC_OLD = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
            "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
            "door(d1).\ndoor(d2).\ngrounding(open(D)=true) :- door(D).\n")
RTEC_NEW = RTEC_OLD.replace("terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n",
                            "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
                            "terminatedAt(open(D)=true, T) :- happensAt(locked(D), T).\n")


# a LARS program of two strata, (a, c) and (b), its top one changed, and a stream in two
# parts (the second with late events and a retraction on both sides of T = 4) for fleet upgrades
LARS_TWO_STRATA = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"
LARS_TWO_STRATA_TOP_CHANGED = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X), X != z.\nc(X) :- q(X).\n"
STRATA_FIRST = [{"t": 0}, {"t": 1, "pred": "p", "args": ["x"]}, {"t": 2, "pred": "q", "args": ["x"]},
                {"t": 3, "pred": "p", "args": ["z"]}, {"t": 5, "pred": "q", "args": ["y"]}, {"t": 8}]
STRATA_SECOND = [{"t": 2, "pred": "p", "args": ["z"]}, {"t": 6, "pred": "p", "args": ["w"]},
                 {"t": 3, "pred": "p", "args": ["z"], "op": "retract"}, {"t": 9, "pred": "p", "args": ["z"]},
                 {"t": 10, "pred": "q", "args": ["v"]}, {"t": 12, "pred": "p", "args": ["y"]}, {"t": 14}]
STRATA_SPAN = (0, 14)

# the second part of the stream of the LARS chain fleets' upgrade tests (late events and a
# retraction on both sides of T = 3), over p and s
CHAIN_SECOND = [{"t": 2, "pred": "p", "args": ["b"]}, {"t": 4, "pred": "s", "args": ["b"]},
                {"t": 3, "pred": "s", "args": ["a"], "op": "retract"}, {"t": 7, "pred": "p", "args": ["c"]},
                {"t": 8, "pred": "s", "args": ["c"]}, {"t": 10}]
CHAIN_SPAN = (0, 10)

# Random upgrade programs with @-heads (runtime/test_upgrade_lars_at.py,
# runtime/fleet/test_stage_upgrade_lars_at.py): LARS_RULES and these, over p and r events
LARS_AT_RULES = [
    "w(X) at U :- p(X) at U [2].",
    "w(X) at U :- p(X) at U [3], r(X).",
    "w(X) at U :- q(X) at U [2].",
    "w(X) at U :- p(X) at U [1], not r(X) [2].",
    "v(X) :- w(X) at U [1].",
    "w(X) at U :- r(X) at U [2], p(X).",
]
LARS_AT_EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                          **({"op": "retract"} if retract else {})},
                          st.integers(0, 10), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]), st.booleans())
LARS_AT_PROGRAM = st.lists(st.sampled_from(LARS_RULES + LARS_AT_RULES), min_size=1, max_size=3, unique=True)

# An @-head dated before an upgrade's T = 4 by an evaluation from T on
# (runtime/test_explain_upgrade_at.py, by hand, and runtime/test_explain_fleet_lars_upgrade.py)
LARS_DATED_OLD = "late(X) at U :- p(X) at U [3], a(X).\n"
LARS_DATED_NEW = "late(X) at U :- p(X) at U [3], b(X).\n"
LARS_DATED_EVENTS = [{"t": 0}, {"t": 2, "pred": "p", "args": ["z"]}, {"t": 3, "pred": "p", "args": ["x"]},
                     {"t": 3, "pred": "p", "args": ["y"]}, {"t": 3, "pred": "a", "args": ["z"]},
                     {"t": 5, "pred": "b", "args": ["x"]}, {"t": 6, "pred": "a", "args": ["x"]},
                     {"t": 6, "pred": "a", "args": ["y"]}, {"t": 8}]
