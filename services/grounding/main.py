"""The grounding service: `python services/grounding/main.py PROGRAM... --bootstrap HOST:PORT` is `chronolog service grounding ...`."""

from chronolog.cli.fleet import service_main

if __name__ == "__main__":
    service_main("grounding")
