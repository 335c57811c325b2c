"""Who may log in: PLAIN passwords and SCRAM credentials, as a Kafka broker keeps them.

Kafka keeps PLAIN users in the listener's JAAS configuration (fixed when the broker
starts) and SCRAM credentials in the cluster metadata, where
AlterUserScramCredentials changes them at run time. A SCRAM credential is never the
password: it is a salt, an iteration count and two keys derived from the salted
password (RFC 5802), so the broker can check a client's proof without being able
to replay it. The same derivation serves `kafka-configs --add-config` (the client
sends the salted password) and users given to the harness (we salt the password).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from kafkatest.security_names import SCRAM_MECHANISMS

SCRAM_BY_NUMBER = {number: name for name, (_h, number) in SCRAM_MECHANISMS.items()}
#: Kafka's bounds for both mechanisms (ScramMechanism.java).
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
#: What kafka-configs and the Java admin client use unless told otherwise.
DEFAULT_ITERATIONS = 4096


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def _hmac(hash_name: str, key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hash_name).digest()


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """RFC 5802's Hi(): PBKDF2 with the mechanism's HMAC."""
    hash_name = SCRAM_MECHANISMS[mechanism][0]
    return hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)


def credential_from_salted(
    mechanism: str, salt: bytes, salted: bytes, iterations: int
) -> ScramCredential:
    hash_name = SCRAM_MECHANISMS[mechanism][0]
    client_key = _hmac(hash_name, salted, b"Client Key")
    return ScramCredential(
        salt=salt,
        stored_key=hashlib.new(hash_name, client_key).digest(),
        server_key=_hmac(hash_name, salted, b"Server Key"),
        iterations=iterations,
    )


def credential_for_password(
    mechanism: str, password: str, iterations: int = DEFAULT_ITERATIONS
) -> ScramCredential:
    salt = os.urandom(32)
    return credential_from_salted(
        mechanism, salt, salted_password(mechanism, password, salt, iterations), iterations
    )


class CredentialStore:
    """PLAIN users (the JAAS list) and SCRAM credentials (the metadata), per user."""

    def __init__(self) -> None:
        self._plain: dict[str, str] = {}
        self._scram: dict[str, dict[str, ScramCredential]] = {}
        #: The cluster's delegation tokens: a SCRAM login with ``tokenauth`` is one.
        self.tokens: TokenLogins | None = None

    # -- PLAIN --------------------------------------------------------------------

    def set_plain(self, user: str, password: str) -> None:
        self._plain[user] = password

    def plain_matches(self, user: str, password: str) -> bool:
        expected = self._plain.get(user)
        # Compare even for an unknown user so timing says nothing about who exists.
        return hmac.compare_digest((expected or "\0").encode(), password.encode()) and (
            expected is not None
        )

    # -- SCRAM --------------------------------------------------------------------

    def scram(self, user: str, mechanism: str) -> ScramCredential | None:
        return self._scram.get(user, {}).get(mechanism)

    def token(self, token_id: str, mechanism: str) -> tuple[str, ScramCredential] | None:
        """(owner's name, credential) of a delegation token, for a ``tokenauth`` login."""
        return None if self.tokens is None else self.tokens.login(token_id, mechanism)

    def set_scram(self, user: str, mechanism: str, credential: ScramCredential) -> None:
        self._scram.setdefault(user, {})[mechanism] = credential

    def delete_scram(self, user: str, mechanism: str) -> bool:
        """False when there was nothing to delete."""
        mechanisms = self._scram.get(user)
        if not mechanisms or mechanism not in mechanisms:
            return False
        del mechanisms[mechanism]
        if not mechanisms:
            del self._scram[user]
        return True

    def scram_users(self) -> list[str]:
        return sorted(self._scram)

    def scram_mechanisms(self, user: str) -> list[tuple[str, int]]:
        """(mechanism, iterations) for each SCRAM credential `user` has."""
        return [
            (mechanism, credential.iterations)
            for mechanism, credential in sorted(self._scram.get(user, {}).items())
        ]

    def add_user(self, user: str, password: str, mechanisms: Iterable[str]) -> None:
        """Let `user` log in with `password` over each of `mechanisms`."""
        for mechanism in mechanisms:
            if mechanism == "PLAIN":
                self.set_plain(user, password)
            else:
                self.set_scram(user, mechanism, credential_for_password(mechanism, password))

    # -- Describe/AlterUserScramCredentials, with ScramImage's and ScramControlManager's rules

    def describe(
        self, users: list[str] | None
    ) -> list[tuple[str, str, str | None, list[tuple[int, int]]]]:
        """(user, error name, message, [(mechanism number, iterations)]) per user asked.

        No users (null or empty) means every user with a SCRAM credential.
        """
        if not users:
            return [(user, "none", None, self._infos(user)) for user in self.scram_users()]
        counts = Counter(users)
        results: list[tuple[str, str, str | None, list[tuple[int, int]]]] = []
        for user, count in counts.items():
            if count > 1:
                message = f"Cannot describe SCRAM credentials for the same user twice in a single request: {user}"
                results.append((user, "duplicate_resource", message, []))
            elif user not in self._scram:
                message = f"Attempt to describe a user credential that does not exist: {user}"
                results.append((user, "resource_not_found", message, []))
            else:
                results.append((user, "none", None, self._infos(user)))
        return results

    def _infos(self, user: str) -> list[tuple[int, int]]:
        return [(SCRAM_MECHANISMS[m][1], i) for m, i in self.scram_mechanisms(user)]

    def alter(
        self,
        deletions: list[tuple[str, int]],
        upsertions: list[tuple[str, int, int, bytes, bytes]],
    ) -> list[tuple[str, str, str | None]]:
        """Apply what is valid; (user, error name, message) per user named.

        `deletions` are (user, mechanism number); `upsertions` (user, mechanism
        number, iterations, salt, salted password). A user named twice fails as a
        whole, as on Kafka; the rest are applied together.
        """
        errors: dict[str, tuple[str, str]] = {}
        to_delete: dict[str, str] = {}
        to_upsert: dict[str, tuple[str, int, bytes, bytes]] = {}
        twice = (
            "duplicate_resource",
            "A user credential cannot be altered twice in the same request",
        )
        for user, number in deletions:
            if user in errors:
                continue
            if to_delete.pop(user, None) is not None:
                errors[user] = twice
                continue
            mechanism = SCRAM_BY_NUMBER.get(number)
            error = _check_name_and_mechanism(user, mechanism)
            if error is None and self.scram(user, mechanism or "") is None:
                error = (
                    "resource_not_found",
                    "Attempt to delete a user credential that does not exist",
                )
            if error is not None:
                errors[user] = error
            else:
                to_delete[user] = mechanism or ""
        for user, number, iterations, salt, salted in upsertions:
            if user in errors:
                continue
            if to_delete.pop(user, None) is not None or to_upsert.pop(user, None) is not None:
                errors[user] = twice
                continue
            mechanism = SCRAM_BY_NUMBER.get(number)
            error = _check_name_and_mechanism(user, mechanism)
            if error is None and iterations < MIN_ITERATIONS:
                error = ("unacceptable_credential", "Too few iterations")
            elif error is None and iterations > MAX_ITERATIONS:
                error = ("unacceptable_credential", "Too many iterations")
            if error is not None:
                errors[user] = error
            else:
                to_upsert[user] = (mechanism or "", iterations, salt, salted)
        results: list[tuple[str, str, str | None]] = []
        for user, mechanism in to_delete.items():
            self.delete_scram(user, mechanism)
            results.append((user, "none", None))
        for user, (mechanism, iterations, salt, salted) in to_upsert.items():
            self.set_scram(
                user, mechanism, credential_from_salted(mechanism, salt, salted, iterations)
            )
            results.append((user, "none", None))
        results.extend((user, name, message) for user, (name, message) in errors.items())
        return results


def _check_name_and_mechanism(user: str, mechanism: str | None) -> tuple[str, str] | None:
    if not user:
        return ("unacceptable_credential", "Username must not be empty")
    if mechanism is None:
        return ("unsupported_sasl_mechanism", "Unknown SCRAM mechanism")
    return None


class TokenLogins(Protocol):
    """What a ``tokenauth`` login needs of the cluster's delegation tokens
    (`delegation_tokens.DelegationTokens`), named here so that the tokens module,
    which builds on these credentials, is not imported back."""

    def login(self, token_id: str, mechanism: str) -> tuple[str, ScramCredential] | None: ...
