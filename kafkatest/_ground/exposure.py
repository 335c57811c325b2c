"""Whether an address the emulator listens on is reachable from other machines.

The emulator has no authentication by default and its control interface none at
all: whoever reaches the port can read and write every topic (and inject faults).
Loopback is the safe default; listening anywhere else deserves a warning.
"""

from __future__ import annotations

import ipaddress
import socket

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class ExposedEmulatorWarning(UserWarning):
    """The emulator (or its control interface) listens beyond loopback."""


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback address (never a wildcard)."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    if name in ("", "*"):
        return False
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(name, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(
        ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses
    )


def is_wildcard(host: str) -> bool:
    name = host.strip("[]")
    return name in ("", "*", "0.0.0.0", "::")


def exposure_warning(host: str, what: str = "the emulator") -> str | None:
    """The warning to print for listening on `host`, None on loopback."""
    if is_loopback(host):
        return None
    where = "every network interface" if is_wildcard(host) else repr(host)
    return (
        f"WARNING: {what} listens on {where}, not only on loopback: anyone who can reach "
        "it can read and write its topics and inject faults, with no password. Listen on "
        "127.0.0.1 unless other machines must connect (and then only on a trusted network)."
    )
