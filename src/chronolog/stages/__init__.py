"""The fleet's stages, below the dialects: what a dialect gives the fleet.

A fleet service runs one *stage* (``interface.Stage``: records in, records
out, its state as data).  Which stages a program runs, and how they are
cut — per stratum or chained, by which partition key — is the program's
``FleetLayout``, which its dialect makes (``dialects.registry``:
``Dialect.layout``).  The runtime (``runtime/fleet``) builds topics and
services from the layout and asks it for each service's stage; it never
names a dialect.

This package sits between ``dialects`` and ``state`` so that both the
dialects' own stages (LARS's grounding, stratum reasoners, output and chain:
``dialects/lars/stages.py``) and the stages that are no dialect's can
implement one interface: ingest (validation and routing by key,
``ingest.py``) and ``EvaluatorStage`` (any ``Evaluator`` as one chain,
``evaluator.py``).
"""
