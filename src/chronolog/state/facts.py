"""Moved to ``chronolog.dialects.lars.facts`` (LARS's facts, atoms and imports
as plain data).  This re-export keeps ``dialects/lars/evaluator.py`` working
until issue 36 part 1 (LARS behind Evaluator) rewrites it; delete it then."""

from chronolog.dialects.lars.facts import atoms_data, atoms_from, facts_data, facts_from, imported_data, imported_from

__all__ = ["atoms_data", "atoms_from", "facts_data", "facts_from", "imported_data", "imported_from"]
