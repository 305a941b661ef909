"""DatalogMTL (MeTeoR syntax): metric temporal rules over rational time.

``intervals`` is the interval algebra (coalescing, the metric operators as
interval transformations), ``syntax`` the program IR, ``materialise`` the
semi-naive fixpoint over intervals, ``evaluator`` the dialect's
``chronolog.evaluator.Evaluator`` (streaming for forward-propagating
programs, batch otherwise).  The parser is ``chronolog.dialects.mtl.parser``.
"""
