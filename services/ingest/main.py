"""The ingest service: `python services/ingest/main.py PROGRAM... --bootstrap HOST:PORT` is `chronolog service ingest ...`."""

from chronolog.cli.fleet import service_main

if __name__ == "__main__":
    service_main("ingest")
