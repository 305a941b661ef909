"""Entry point of the output service: `python services/output/main.py PROGRAM... [options]`.

The same as `chronolog service output PROGRAM... [options]`; the service
itself lives in the package (chronolog.runtime.stages, chronolog.runtime.service).
"""

import sys

from chronolog.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["service", "output", *sys.argv[1:]]))
