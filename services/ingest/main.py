"""Entry point of the ingest service: `python services/ingest/main.py PROGRAM... [options]`.

The same as `chronolog service ingest PROGRAM... [options]`; the service
itself lives in the package (chronolog.runtime.stages, chronolog.runtime.service).
"""

import sys

from chronolog.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["service", "ingest", *sys.argv[1:]]))
