"""The ``chronolog`` command line."""
