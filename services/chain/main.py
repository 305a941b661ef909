"""The chain service: `python services/chain/main.py PROGRAM... --bootstrap HOST:PORT` is `chronolog service chain ...`."""

from chronolog.cli.fleet import service_main

if __name__ == "__main__":
    service_main("chain")
