"""The fuzzed emulator: `kafkatest emulator` with its protocol schemas loaded first.

The emulator imports kio's schema module of an API version the first time a request
of that version arrives (about 25 MB and 1.6 s for all of them, too much to pay at
every start in a user's test session). A fuzz run reaches most of them, so its RSS
would grow by that much with nothing leaked. Loading them all before the first
frame makes "RSS before" comparable with "RSS after": what grows then is state.
"""

from __future__ import annotations

import sys

from kio.index import UnknownEntity, load_payload_module
from kio.static.constants import EntityType

from kafkatest.cli import main as cli_main
from kafkatest.emulator.server.handlers import load_handlers


def preload_schemas() -> int:
    """Import the request and response module of every version the emulator serves."""
    loaded = 0
    for api in load_handlers().values():
        for version in range(api.advertised_min_version, api.max_version + 1):
            for entity in (EntityType.request, EntityType.response):
                try:
                    load_payload_module(api.api_key, version, entity)
                except UnknownEntity:
                    continue  # a version kio does not describe is refused before decoding
                loaded += 1
    return loaded


if __name__ == "__main__":
    preload_schemas()
    sys.exit(cli_main(["emulator", *sys.argv[1:]]))
