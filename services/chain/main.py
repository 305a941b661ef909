"""Entry point of the chain service: `python services/chain/main.py PROGRAM... [options]`.

The same as `chronolog service chain PROGRAM... [options]`; the service
itself lives in the package (chronolog.runtime.stages, chronolog.runtime.service).
"""

import sys

from chronolog.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["service", "chain", *sys.argv[1:]]))
