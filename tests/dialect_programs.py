"""One small program per dialect, for the tests that hold every command's options to every
dialect (tests/cli/test_run_options.py, test_fleet_options.py, runtime/backfill/test_backfill_options.py)."""

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
