"""A justification-based truth maintenance system over a ground normal program.

Ticker's TMS strategy (seed 000, section 5): the ground program changes by
rule additions and removals, and the TMS keeps a labelling of its atoms
(``in``/``out``) that is an answer set (Doyle's admissible model) of the
current rules.  After a change only the part of the labelling the change can
reach is reconsidered:

1. *Seeds*: the head of an added rule that is applicable under the current
   labels while the head is out, and the head of a removed rule that was
   applicable while the head was in.  Every other label stays valid (a rule
   that does not fire, or a head that is in anyway, changes nothing).
2. *Affected part*: the seeds and everything that depends on them (the heads
   of the rules whose body mentions an affected atom), as Doyle's
   repercussions but over all justifications, not only the current supports.
   The atoms outside are a splitting set of the new program whose rules did
   not change, so their labels still form an answer set of their part.
3. *Relabelling*: the affected part is solved given the fixed labels
   outside it: justifications that the labels decide propagate (an atom with
   a justification whose body holds is in; an atom without any justification
   that could still hold — including unfounded positive loops — is out), and
   where even loops leave atoms open a deterministic choice is made, trying
   first the atom's previous label (stability: if the previous choices still
   give an answer set, exactly they are kept) and for new atoms a preference
   derived from the seed.  Choices that lead to a contradiction (an odd loop
   or a constraint) are undone by backtracking inside the affected part.
4. *Start over*: only when the affected part has no answer set given the
   labels outside it (a constraint or odd loop that only a different choice
   elsewhere can satisfy), the whole program is solved the same way, again
   preferring the previous labels.  If that fails too there is no answer set
   (``consistent`` is False) and the next update solves the whole program.

Constraints are rules with head ``None`` (internally the atom ``FALSE``,
which must stay out).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Hashable, Iterable
from typing import Any

FALSE = 0  # atom id of the head of constraints; never in
Key = Hashable
RuleKey = tuple  # (head key | None, tuple of positive body keys, tuple of negative body keys)


class Tms:
    """Ground rules, their atoms and an answer set of them, maintained under changes."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.ids: dict[Key, int] = {}
        self.keys: dict[int, Key] = {FALSE: None}
        self._next = 1
        self._uses: dict[int, int] = {}  # atom -> number of rules mentioning it
        self.rules: dict[RuleKey, tuple[int, tuple[int, ...], tuple[int, ...]]] = {}
        self._copies: dict[RuleKey, int] = {}  # rules added more than once: how many times
        self.by_head: dict[int, set[RuleKey]] = {FALSE: set()}
        self.by_body: dict[int, set[RuleKey]] = {}
        self.inn: set[int] = set()
        self.consistent = True
        self.version = 0  # changes whenever the labels may have changed
        self._added: list[RuleKey] = []
        self._removed: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
        self._rank: dict[int, int] = {}
        self._born: set[int] = set()  # atoms created since the last update (no previous label)
        self._pending_release: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
        # statistics
        self.restarts = 0  # whole-program solves after a failed local relabelling
        self.relabelled = 0  # atoms in affected parts, summed over updates

    # ------------------------------------------------------------ atoms

    def _atom(self, key: Key) -> int:
        a = self.ids.get(key)
        if a is None:
            a = self.ids[key] = self._next
            self._next += 1
            self.keys[a] = key
            self._uses[a] = 0
            self._born.add(a)
        self._uses[a] += 1
        return a

    def _release(self, a: int) -> None:
        if a == FALSE:
            return
        n = self._uses[a] - 1
        if n:
            self._uses[a] = n
            return
        del self._uses[a]
        del self.ids[self.keys.pop(a)]
        if a in self.inn:
            self.inn.discard(a)
            self.version += 1
        self._rank.pop(a, None)
        self.by_head.pop(a, None)
        self.by_body.pop(a, None)

    def rank(self, a: int) -> int:
        """The atom's place in the choice order: a stable hash of its key and the seed
        (the same in every process, unlike ``hash``)."""
        r = self._rank.get(a)
        if r is None:
            r = self._rank[a] = _mix(zlib.crc32(repr(self.keys[a]).encode()) ^ (self.seed * 0x9E3779B97F4A7C15))
        return r

    # ------------------------------------------------------------ rules

    def add(self, head: Key | None, pos: Iterable[Key] = (), neg: Iterable[Key] = ()) -> None:
        """Add the rule ``head :- pos, not neg`` (a constraint if ``head`` is None)."""
        key: RuleKey = (head, tuple(pos), tuple(neg))
        if key in self.rules:
            self._copies[key] = self._copies.get(key, 1) + 1  # (added twice: removed twice)
            return
        h = FALSE if head is None else self._atom(head)
        p = tuple(self._atom(k) for k in key[1])
        n = tuple(self._atom(k) for k in key[2])
        self.rules[key] = (h, p, n)
        self.by_head.setdefault(h, set()).add(key)
        for a in set(p + n):
            self.by_body.setdefault(a, set()).add(key)
        self._added.append(key)

    def remove(self, head: Key | None, pos: Iterable[Key] = (), neg: Iterable[Key] = ()) -> None:
        key: RuleKey = (head, tuple(pos), tuple(neg))
        copies = self._copies.get(key)
        if copies is not None:
            if copies == 2:
                del self._copies[key]
            else:
                self._copies[key] = copies - 1
            return
        rule = self.rules.pop(key, None)
        if rule is None:
            return
        h, p, n = rule
        self.by_head[h].discard(key)
        for a in set(p + n):
            self.by_body[a].discard(key)
        self._removed.append(rule)
        self._pending_release.append(rule)

    def rule_keys(self) -> Iterable[RuleKey]:
        return self.rules.keys()

    # ------------------------------------------------------------ labels

    def model(self) -> set[Key]:
        """The keys of the atoms in (empty if there is no answer set)."""
        return {self.keys[a] for a in self.inn} if self.consistent else set()

    def holds(self, key: Key) -> bool:
        a = self.ids.get(key)
        return a is not None and a in self.inn

    def _applicable(self, pos: tuple[int, ...], neg: tuple[int, ...]) -> bool:
        inn = self.inn
        return all(p in inn for p in pos) and not any(n in inn for n in neg)

    def update(
        self, prefer: Callable[[Key], bool | None] | None = None, fallback: Callable[[Key], bool | None] | None = None
    ) -> bool:
        """Relabel after the rules added and removed since the last update; True if
        the labels are an answer set of the rules (``consistent``).

        A choice takes ``prefer``'s label if it gives one (a replay following the
        labels a live run chose), else the atom's previous label, else for a new
        atom ``fallback``'s, else the seed's."""
        added, removed = self._added, self._removed
        self._added, self._removed = [], []
        released, self._pending_release = self._pending_release, []
        born, self._born = self._born, set()
        seeds: set[int] = set()
        if self.consistent:
            inn = self.inn
            for h, p, n in removed:
                if h in inn and self._applicable(p, n):
                    seeds.add(h)
            for key in added:
                rule = self.rules.get(key)
                if rule is None:
                    continue
                h, p, n = rule
                if h not in inn and self._applicable(p, n):
                    seeds.add(h)
        for h, p, n in released:  # atoms no rule mentions any more are forgotten
            for a in p + n:
                self._release(a)
            self._release(h)
        seeds = {a for a in seeds if a in self.keys}
        if self.consistent and not seeds:
            return True
        self.version += 1
        old = set(self.inn)
        if self.consistent:
            region = self._affected(seeds)
            self.relabelled += len(region)
            found = self._solve(region, old, born, prefer, fallback)
            if found is not None:
                self.inn = (self.inn - region) | found
                return True
            self.restarts += 1
        region = set(self.keys)
        self.relabelled += len(region)
        found = self._solve(region, old, born, prefer, fallback)
        if found is None:
            self.consistent = False
            return False
        self.inn = found
        self.consistent = True
        return True

    def _affected(self, seeds: set[int]) -> set[int]:
        region = set(seeds)
        todo = list(seeds)
        rules, by_body = self.rules, self.by_body
        while todo:
            a = todo.pop()
            for key in by_body.get(a, ()):
                h = rules[key][0]
                if h not in region:
                    region.add(h)
                    todo.append(h)
        return region

    def adopt(self, keys: Iterable[Key]) -> bool:
        """Take the labelling ``keys`` (a restored checkpoint's) if it is an answer
        set of the current rules; False (labels unchanged) if it is not."""
        wanted = set(keys)
        if any(k not in self.ids for k in wanted):
            return False
        inn = {self.ids[k] for k in wanted}
        if not self.is_answer_set(inn):
            return False
        self.inn, self.consistent = inn, True
        self.version += 1
        return True

    def is_answer_set(self, inn: set[int]) -> bool:
        """Whether ``inn`` is an answer set of the rules: the least model of the reduct."""
        derived = _least_model([(h, p) for h, p, n in self.rules.values() if not any(x in inn for x in n)])
        return derived == inn and FALSE not in derived

    # ------------------------------------------------------------ solving

    def _solve(
        self, region: set[int], old: set[int], born: set[int],
        prefer: Callable[[Key], bool | None] | None, fallback: Callable[[Key], bool | None] | None,
    ) -> set[int] | None:
        """The atoms in of an answer set of the rules with heads in ``region``, the
        labels outside fixed; None if there is none."""
        inn = self.inn
        local: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
        for h in region:
            for key in self.by_head.get(h, ()):
                _, p, n = self.rules[key]
                if any(x not in region and x not in inn for x in p) or any(x not in region and x in inn for x in n):
                    continue  # blocked by a fixed label
                local.append((h, tuple(x for x in p if x in region), tuple(x for x in n if x in region)))
        keys = self.keys

        def preference(a: int) -> bool:
            if prefer is not None:
                got = prefer(keys[a])
                if got is not None:
                    return got
            if a in old:
                return True
            if a not in born:
                return False  # it was out
            if fallback is not None:
                got = fallback(keys[a])
                if got is not None:
                    return got
            return bool(self.rank(a) >> 63)

        solver = _RegionSolver(region, local, preference, self.rank)
        return solver.solve()

    # ------------------------------------------------------------ state

    def export_labels(self, encode: Callable[[Key], Any]) -> list:
        return sorted((encode(self.keys[a]) for a in self.inn), key=repr)


def _least_model(rules: list[tuple[int, tuple[int, ...]]]) -> set[int]:
    """The least model of positive rules (head, body), by counting the body atoms
    still missing per rule (linear in the rules' size)."""
    derived: set[int] = set()
    waiting: dict[int, list[int]] = {}
    missing: list[int] = []
    queue: list[int] = []
    for i, (h, p) in enumerate(rules):
        body = set(p)
        missing.append(len(body))
        for a in body:
            waiting.setdefault(a, []).append(i)
        if not body:
            queue.append(h)
    while queue:
        h = queue.pop()
        if h in derived:
            continue
        derived.add(h)
        for i in waiting.get(h, ()):
            missing[i] -= 1
            if missing[i] == 0:
                queue.append(rules[i][0])
    return derived


def _mix(x: int) -> int:
    """splitmix64's finaliser: a seed changes the order non-linearly (a CRC alone would not)."""
    x &= 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


class _RegionSolver:
    """Answer sets of a small normal program (the affected part), by propagation
    and choices in a fixed order with preferred values first."""

    def __init__(
        self, atoms: set[int], rules: list[tuple[int, tuple[int, ...], tuple[int, ...]]],
        preference: Callable[[int], bool], rank: Callable[[int], int],
    ) -> None:
        self.atoms = atoms
        self.rules = rules
        self.by_head: dict[int, list[int]] = {a: [] for a in atoms}
        self.pos_in: dict[int, list[int]] = {}
        self.neg_in: dict[int, list[int]] = {}
        for i, (h, p, n) in enumerate(rules):
            self.by_head[h].append(i)
            for a in p:
                self.pos_in.setdefault(a, []).append(i)
            for a in n:
                self.neg_in.setdefault(a, []).append(i)
        self.order = sorted(atoms, key=lambda a: (rank(a), a))
        self.preference = preference

    def solve(self) -> set[int] | None:
        val: dict[int, bool] = {FALSE: False} if FALSE in self.atoms else {}
        return self._search(val)

    def _search(self, val: dict[int, bool]) -> set[int] | None:
        stack = [val]
        while stack:
            val = stack.pop()
            if not self._propagate(val):
                continue
            open_atom = next((a for a in self.order if a not in val), None)
            if open_atom is None:
                if self._founded(val):
                    return {a for a, v in val.items() if v}
                continue
            first = self.preference(open_atom)
            other = dict(val)
            other[open_atom] = not first
            val[open_atom] = first
            stack.append(other)
            stack.append(val)
        return None

    def _propagate(self, val: dict[int, bool]) -> bool:
        rules = self.rules
        changed = True
        while changed:
            changed = False
            # justifications that hold make their head in; heads out with one holding: conflict
            for h, p, n in rules:
                if val.get(h) is True:
                    continue
                if all(val.get(x) is True for x in p) and all(val.get(x) is False for x in n):
                    if val.get(h) is False:
                        return False
                    val[h] = True
                    changed = True
            # upper bound: what could still be founded
            possible = _least_model(
                [(h, p) for h, p, n in rules if not any(val.get(x) is True for x in n) and not any(val.get(x) is False for x in p)]
            )
            for a in self.atoms:
                if a not in possible:
                    v = val.get(a)
                    if v is True:
                        return False
                    if v is None:
                        val[a] = False
                        changed = True
        return True

    def _founded(self, val: dict[int, bool]) -> bool:
        """Every atom in is derived by the reduct's least model, and nothing more."""
        derived = _least_model([(h, p) for h, p, n in self.rules if not any(val[x] for x in n)])
        return all(val[a] == (a in derived) for a in self.atoms)
