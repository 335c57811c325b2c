"""The fuzzed emulator: `kafkatest emulator` with its protocol schemas loaded first.

The emulator imports kio's schema module of an API version the first time a request
of that version arrives (about 25 MB and 1.6 s for all of them, too much to pay at
every start in a user's test session). A fuzz run reaches most of them, so its RSS
would grow by that much with nothing leaked. Loading them all before the first
frame makes "RSS before" comparable with "RSS after": what grows then is state.

With `--fuzz-acls` the child authorizes with ACLs, and the corpus's client
(User:ANONYMOUS) is allowed part of what it recorded (`grant_part_of_the_corpus`):
the fuzzed requests then take every shape of the authorization layer, served whole,
refused whole, and served in part with the rest refused.
"""

from __future__ import annotations

import argparse
import sys

from kio.index import UnknownEntity, load_payload_module
from kio.static.constants import EntityType

from kafkatest.apps.standalone import LOOPBACK, main, run_standalone
from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator.server.handlers import load_handlers

#: The principal of the corpus's PLAINTEXT clients.
_ANONYMOUS = "User:ANONYMOUS"


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


def grant_part_of_the_corpus(broker: EmulatorBroker) -> None:
    """Allow the corpus's client its seed topic, group and transactional id and a
    look at the cluster; deny reading the topics named like them; the rest (other
    topics, ACL and SCRAM admin, the KIP-848 group) is refused for lack of an ACL."""
    broker.allow(_ANONYMOUS, "ALL", topic="fuzz-seed")
    broker.allow(_ANONYMOUS, "ALL", group="fuzz-seed")
    broker.allow(_ANONYMOUS, "ALL", transactional_id="fuzz-seed", pattern="PREFIXED")
    broker.allow(_ANONYMOUS, "DESCRIBE", cluster=True)
    broker.allow(_ANONYMOUS, "IDEMPOTENT_WRITE", cluster=True)
    broker.deny(_ANONYMOUS, "READ", topic="fuzz-seed-", pattern="PREFIXED")


def _serve_with_acls(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    return run_standalone(LOOPBACK, args.port, 1, acls=True, prepare=grant_part_of_the_corpus)


if __name__ == "__main__":
    preload_schemas()
    arguments = sys.argv[1:]
    if "--fuzz-acls" in arguments:
        arguments.remove("--fuzz-acls")
        sys.exit(_serve_with_acls(arguments))
    sys.exit(main(arguments))
