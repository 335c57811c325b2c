"""Delegation tokens (KIP-48) as Kafka 4.1's controller keeps them.

A token is a second identity for its owner: an id and an HMAC of that id under the
cluster's ``delegation.token.secret.key``. Clients log in with SCRAM, the id as
user name and the HMAC (base64) as password, plus the ``tokenauth=true``
extension; the broker then treats the connection as the owner. Kafka stores a
SCRAM credential per mechanism for each token, salted from the HMAC with 4096
iterations, so the login is an ordinary SCRAM exchange; kept the same here.

Tokens are off until a secret is set (`enable`), as on Kafka. The rules and the
error names are DelegationTokenControlManager's: the default and largest lifetime
(``delegation.token.max.lifetime.ms``, 7 days), the renew interval
(``delegation.token.expiry.time.ms``, 24 hours), and the sweep that removes
expired tokens every ``delegation.token.expiry.check.interval.ms`` (an hour): a
token past its expiry is refused by renew and expire at once, but still logs in
and is still described until the next sweep, as on Kafka. Time is the broker's
clock, so a test can age a token by moving that clock.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kafkatest.emulator.state.credentials import (
    MIN_ITERATIONS,
    SCRAM_MECHANISMS,
    ScramCredential,
    credential_for_password,
)

DAY_MS = 24 * 60 * 60 * 1000
#: Kafka's defaults (DelegationTokenManagerConfigs).
MAX_LIFETIME_MS = 7 * DAY_MS
EXPIRY_TIME_MS = DAY_MS
EXPIRY_CHECK_INTERVAL_MS = 60 * 60 * 1000
_LONG_MAX = (1 << 63) - 1


def _plus(now: int, duration: int) -> int:
    """Kafka's saturating sum: a huge duration means "never", not an overflow."""
    return _LONG_MAX if now > _LONG_MAX - duration else now + duration


def new_token_id() -> str:
    """Kafka's Uuid.randomUuid().toString(): 16 random bytes, URL-safe base64, never
    starting with "-" (a command line would read it as an option)."""
    while True:
        text = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
        if not text.startswith("-"):
            return text


@dataclass
class DelegationToken:
    token_id: str
    #: "User:<name>" principals.
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_ms: int
    expiry_ms: int
    max_ms: int
    hmac: bytes
    credentials: dict[str, ScramCredential] = field(repr=False, default_factory=dict)

    def owner_or_renewer(self, principal: str) -> bool:
        return principal == self.owner or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_ms < now_ms or self.expiry_ms < now_ms


class DelegationTokens:
    """The cluster's tokens; disabled until `enable` gives it a secret."""

    def __init__(self, now_ms: Callable[[], int]) -> None:
        self._now_ms = now_ms
        self._secret: bytes | None = None
        self._tokens: dict[str, DelegationToken] = {}
        self._by_hmac: dict[bytes, str] = {}
        self._next_sweep_ms = 0
        self.max_lifetime_ms = MAX_LIFETIME_MS
        self.expiry_time_ms = EXPIRY_TIME_MS
        self.check_interval_ms = EXPIRY_CHECK_INTERVAL_MS

    @property
    def enabled(self) -> bool:
        return self._secret is not None

    def enable(self, secret: str) -> None:
        """Serve tokens, signed with `secret` (Kafka's ``delegation.token.secret.key``)."""
        if not secret:
            raise ValueError("a delegation token secret must not be empty")
        self._secret = secret.encode()
        self._next_sweep_ms = _plus(self._now_ms(), self.check_interval_ms)

    def shift(self, ms: int) -> None:
        """Move the next sweep by `ms` (the clock was put back by as much)."""
        self._next_sweep_ms += ms

    def _sweep(self) -> int:
        """Now, after removing expired tokens if a sweep is due (the controller's timer)."""
        now = self._now_ms()
        if now >= self._next_sweep_ms:
            for token in [t for t in self._tokens.values() if t.expired(now)]:
                self._remove(token)
            self._next_sweep_ms = _plus(now, self.check_interval_ms)
        return now

    def _remove(self, token: DelegationToken) -> None:
        del self._tokens[token.token_id]
        self._by_hmac.pop(token.hmac, None)

    def create(
        self, owner: str, requester: str, renewers: Iterable[str], max_lifetime_ms: int
    ) -> DelegationToken:
        """A new token; a `max_lifetime_ms` <= 0 asks for the broker's maximum."""
        assert self._secret is not None, "tokens are disabled"
        now = self._sweep()
        lifetime = self.max_lifetime_ms
        if max_lifetime_ms > 0:
            lifetime = min(lifetime, max_lifetime_ms)
        max_ms = _plus(now, lifetime)
        token_id = new_token_id()
        digest = hmac.new(self._secret, token_id.encode(), hashlib.sha512).digest()
        password = base64.b64encode(digest).decode()
        token = DelegationToken(
            token_id=token_id,
            owner=owner,
            requester=requester,
            renewers=tuple(renewers),
            issue_ms=now,
            expiry_ms=min(max_ms, _plus(now, self.expiry_time_ms)),
            max_ms=max_ms,
            hmac=digest,
            credentials={
                mechanism: credential_for_password(mechanism, password, MIN_ITERATIONS)
                for mechanism in SCRAM_MECHANISMS
            },
        )
        self._tokens[token_id] = token
        self._by_hmac[digest] = token_id
        return token

    def renew(self, digest: bytes, principal: str, period_ms: int) -> tuple[str, int]:
        """(error name, new expiry) for RenewDelegationToken."""
        now = self._sweep()
        token = self._by_digest(digest)
        if token is None:
            return "delegation_token_not_found", 0
        if token.expired(now):
            return "delegation_token_expired", 0
        if not token.owner_or_renewer(principal):
            return "delegation_token_owner_mismatch", 0
        renew = self.expiry_time_ms if period_ms <= 0 else min(self.expiry_time_ms, period_ms)
        token.expiry_ms = min(token.max_ms, _plus(now, renew))
        return "none", token.expiry_ms

    def expire(self, digest: bytes, principal: str, period_ms: int) -> tuple[str, int]:
        """(error name, new expiry) for ExpireDelegationToken; a negative period ends
        the token now (it is removed)."""
        now = self._sweep()
        token = self._by_digest(digest)
        if token is None:
            return "delegation_token_not_found", 0
        if not token.owner_or_renewer(principal):
            return "delegation_token_owner_mismatch", 0
        if period_ms < 0:
            self._remove(token)
            return "none", now
        if token.expired(now):
            return "delegation_token_expired", 0
        token.expiry_ms = min(token.max_ms, _plus(now, period_ms))
        return "none", token.expiry_ms

    def tokens(self, owners: list[str] | None) -> list[DelegationToken]:
        """The tokens owned or renewable by one of `owners` (every token when None)."""
        self._sweep()
        return [
            token
            for token in self._tokens.values()
            if owners is None or any(token.owner_or_renewer(o) for o in owners)
        ]

    def login(self, token_id: str, mechanism: str) -> tuple[str, ScramCredential] | None:
        """(owner's name, SCRAM credential) for a ``tokenauth`` login, or None."""
        if self._secret is None:
            return None
        self._sweep()
        token = self._tokens.get(token_id)
        if token is None:
            return None
        return token.owner.partition(":")[2], token.credentials[mechanism]

    def _by_digest(self, digest: bytes) -> DelegationToken | None:
        token_id = self._by_hmac.get(bytes(digest))
        return None if token_id is None else self._tokens.get(token_id)
