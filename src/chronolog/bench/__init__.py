"""Benchmarks (``chronolog bench``): the public workloads run end to end and measured."""

from pathlib import Path


def shared_data(name: str) -> Path:
    """The shared folder's ``data/<name>`` beside the checkout (``../shared``), looked for
    upwards from here so that an installed copy finds it too; else where it would be
    beside the working directory (the caller says it is missing)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent.parent / "shared" / "data" / name
        if candidate.is_dir():
            return candidate
    return Path.cwd().parent / "shared" / "data" / name
