"""RTEC (Event Calculus) evaluation: solver, interval lists, evaluator."""
