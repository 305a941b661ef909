"""chronolog: stream reasoning over timestamped facts, with corrections for late and retracted events."""

__version__ = "0.1.0"
