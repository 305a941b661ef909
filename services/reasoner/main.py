"""The reasoner service: `python services/reasoner/main.py PROGRAM... --bootstrap HOST:PORT` is `chronolog service reasoner ...`."""

from chronolog.cli.fleet import service_main

if __name__ == "__main__":
    service_main("reasoner")
