"""Benchmarks (``chronolog bench``): the public workloads run end to end and measured."""
