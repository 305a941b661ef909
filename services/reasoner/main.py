"""Entry point of the reasoner service: `python services/reasoner/main.py PROGRAM... [options]`.

The same as `chronolog service reasoner PROGRAM... [options]`; the service
itself lives in the package (chronolog.runtime.stages, chronolog.runtime.service).
"""

import sys

from chronolog.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["service", "reasoner", *sys.argv[1:]]))
