"""The output service: `python services/output/main.py PROGRAM... --bootstrap HOST:PORT` is `chronolog service output ...`."""

from chronolog.cli.fleet import service_main

if __name__ == "__main__":
    service_main("output")
