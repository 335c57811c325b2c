"""The fuzzed emulator: `kafkatest emulator` with its protocol schemas loaded first.

The emulator imports kio's schema module of an API version the first time a request
of that version arrives (about 25 MB and 1.6 s for all of them, too much to pay at
every start in a user's test session). A fuzz run reaches most of them, so its RSS
would grow by that much with nothing leaked. Loading them all before the first
frame makes "RSS before" comparable with "RSS after": what grows then is state.

Every child starts with a long, truncated log to look up (`long_log`) and prints
its request timings when it stops (the report's slowest request). With
`--fuzz-acls` the child authorizes with ACLs, and the corpus's client
(User:ANONYMOUS) is allowed part of what it recorded (`grant_part_of_the_corpus`):
the fuzzed requests then take every shape of the authorization layer, served whole,
refused whole, and served in part with the rest refused.
"""

from __future__ import annotations

import argparse
import sys

from kio.index import UnknownEntity, load_payload_module
from kio.static.constants import EntityType

from kafkatest.apps.fuzz.long_log import LONG_TOPIC, prepare_long_log
from kafkatest.apps.standalone import add_emulator_arguments, run_from_args
from kafkatest.brokers.emulator import EmulatorBroker
from kafkatest.emulator import load_handlers

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
    broker.allow(_ANONYMOUS, "DESCRIBE", topic=LONG_TOPIC)


def _serve(argv: list[str]) -> int:
    """`kafkatest emulator` with the long log prepared (and, with `--fuzz-acls`, ACLs on
    and part of the corpus allowed), its request timings printed when it stops."""
    acls = "--fuzz-acls" in argv
    if acls:
        argv = [arg for arg in argv if arg != "--fuzz-acls"]
    parser = argparse.ArgumentParser()
    add_emulator_arguments(parser)
    args = parser.parse_args([*argv, "--timings"])
    if acls:
        args.acls = True

    def prepare(broker: EmulatorBroker) -> None:
        prepare_long_log(broker)
        if acls:
            grant_part_of_the_corpus(broker)

    return run_from_args(args, prepare=prepare)


if __name__ == "__main__":
    preload_schemas()
    sys.exit(_serve(sys.argv[1:]))
