"""The ``chronolog`` command line.

Start-up: the command line caches the bytecode of the modules it imports
even when ``PYTHONDONTWRITEBYTECODE`` is set (as in the container image and
many CI environments).  An editable install has no compiled modules of its
own, and compiling them at every start costs about 70 ms — a quarter of a
short ``chronolog run``.  ``CHRONOLOG_NO_BYTECODE_CACHE=1`` keeps Python's
setting.  Where the package folder is not writable nothing is written, as
always.
"""

import os
import sys

if sys.dont_write_bytecode and not os.environ.get("CHRONOLOG_NO_BYTECODE_CACHE"):
    sys.dont_write_bytecode = False
