"""Entry point of the grounding service: `python services/grounding/main.py PROGRAM... [options]`.

The same as `chronolog service grounding PROGRAM... [options]`; the service
itself lives in the package (chronolog.runtime.stages, chronolog.runtime.service).
"""

import sys

from chronolog.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["service", "grounding", *sys.argv[1:]]))
