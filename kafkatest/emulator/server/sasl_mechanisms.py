"""The server side of SASL PLAIN (RFC 4616) and SCRAM (RFC 5802), token in, token out.

Kafka tells two kinds of failure apart, and so must we: a
`SaslAuthenticationError` carries a message Kafka sends to the client verbatim
(PLAIN's "Invalid username or password"), a `SaslError` is replaced by a fixed
text naming only the mechanism, so that SCRAM never reveals whether a user
exists. Messages are Kafka 4.1's (PlainSaslServer, ScramSaslServer, ScramMessages).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from typing import Protocol

from kafkatest.emulator.state.credentials import (
    SCRAM_MECHANISMS,
    CredentialStore,
    ScramCredential,
)


class SaslError(Exception):
    """Authentication failed; the client gets Kafka's generic message."""


class SaslAuthenticationError(SaslError):
    """Authentication failed; the client gets this message as it is."""


class MalformedToken(Exception):
    """Kafka fails with an unexpected exception here: the connection closes unanswered."""


class SaslMechanismServer(Protocol):
    complete: bool
    #: The authenticated user once `complete`.
    authorization_id: str
    #: Whether the login was a delegation token's (SCRAM with ``tokenauth``).
    token_authenticated: bool

    def evaluate(self, token: bytes) -> bytes:
        """The answer to the client's token; raises SaslError when it fails."""
        ...


class PlainServer:
    def __init__(self, credentials: CredentialStore) -> None:
        self._credentials = credentials
        self.complete = False
        self.authorization_id = ""
        self.token_authenticated = False

    def evaluate(self, token: bytes) -> bytes:
        tokens = token.decode("utf-8", errors="replace").split("\0", 3)
        if len(tokens) != 3:
            raise SaslAuthenticationError(
                f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}"
            )
        authzid, username, password = tokens
        if not username:
            raise SaslAuthenticationError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationError("Authentication failed: password not specified")
        if not self._credentials.plain_matches(username, password):
            raise SaslAuthenticationError("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id "
                "that is different from username"
            )
        self.authorization_id = username
        self.complete = True
        return b""


# ScramMessages' patterns, with Java's character-class intersections spelled out.
_SAFE = r"[\x01-\x2b\x2d-\x3c\x3e-\x7f]"  # [\x01-\x7F&&[^=,]]
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"  # [\x01-\x7F&&[^,]]+
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"  # [\x21-\x7E&&[^,]]+
_SASLNAME = rf"(?:{_SAFE}|=2C|=3D)+"
_B64 = r"[a-zA-Z0-9/+]"
_BASE64 = rf"(?:{_B64}{{4}})*(?:{_B64}{{3}}=|{_B64}{{2}}==)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?:m={_VALUE},)?"
    rf"n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})"
)
_CLIENT_FINAL = re.compile(
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})"
)


def _username(saslname: str) -> str:
    name = saslname.replace("=2C", ",")
    if "=" in name.replace("=3D", ""):
        raise ValueError(f"Invalid username: {saslname}")
    return name.replace("=3D", "=")


def _nonce() -> str:
    """Like Kafka's: 130 random bits in base 36."""
    value = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while value:
        value, digit = divmod(value, 36)
        out = digits[digit] + out
    return out or "0"


class ScramServer:
    def __init__(self, mechanism: str, credentials: CredentialStore) -> None:
        self.mechanism = mechanism
        self._hash = SCRAM_MECHANISMS[mechanism][0]
        self._credentials = credentials
        self.complete = False
        self.authorization_id = ""
        #: Whether the client logged in with a delegation token (``tokenauth=true``).
        self.token_authenticated = False
        self._auth_prefix = ""
        self._server_nonce_full = ""
        self._stored_key = b""
        self._server_key = b""

    def evaluate(self, token: bytes) -> bytes:
        if self.complete:
            raise SaslAuthenticationError("Unexpected challenge in Sasl server state COMPLETE")
        if not self._auth_prefix:
            return self._client_first(token.decode("utf-8", errors="replace"))
        return self._client_final(token.decode("utf-8", errors="replace"))

    def _client_first(self, message: str) -> bytes:
        match = _CLIENT_FIRST.fullmatch(message)
        if match is None:
            raise SaslError(f"Invalid SCRAM client first message format: {message}")
        try:
            username = _username(match["saslname"])
        except ValueError as exc:
            raise SaslError("Authentication failed: Credentials could not be obtained") from exc
        extensions = match["extensions"]
        # ScramExtensions.tokenAuthenticated(): Java's parseBoolean, any case of "true".
        self.token_authenticated = any(
            name == "tokenauth" and value.lower() == "true"
            for name, _, value in (e.partition("=") for e in extensions.split(",")[1:])
        )
        credential: ScramCredential | None
        if self.token_authenticated:
            found = self._credentials.token(username, self.mechanism)
            if found is None:
                raise SaslError(f"Token Authentication failed: Invalid tokenId : {username}")
            owner, credential = found
        else:
            owner, credential = username, self._credentials.scram(username, self.mechanism)
        if credential is None:
            raise SaslError("Authentication failed: Invalid user credentials")
        authzid = match["authzid"] or ""
        if authzid and authzid != username:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id "
                "that is different from username"
            )
        nonce = match["nonce"] + _nonce()
        server_first = (
            f"r={nonce},s={base64.b64encode(credential.salt).decode()},i={credential.iterations}"
        )
        bare = f"n={match['saslname']},r={match['nonce']}{extensions}"
        self._auth_prefix = f"{bare},{server_first}"
        self._server_nonce_full = nonce
        self._stored_key = credential.stored_key
        self._server_key = credential.server_key
        # A token logs in as its owner (the principal), not as the token id.
        self.authorization_id = owner
        return server_first.encode()

    def _client_final(self, message: str) -> bytes:
        match = _CLIENT_FINAL.fullmatch(message)
        if match is None:
            raise SaslError(f"Invalid SCRAM client final message format: {message}")
        if match["nonce"] != self._server_nonce_full:
            raise SaslError("Invalid client nonce in the final client message.")
        try:
            proof = base64.b64decode(match["proof"], validate=True)
        except binascii.Error as exc:
            raise SaslError("Invalid SCRAM client final message") from exc
        without_proof = f"c={match['channel']},r={match['nonce']}"
        auth_message = f"{self._auth_prefix},{without_proof}".encode()
        signature = hmac.new(self._stored_key, auth_message, self._hash).digest()
        if len(proof) != len(signature):
            # Kafka's xor() throws IllegalArgumentException: no answer, the socket closes.
            raise MalformedToken("SCRAM client proof of the wrong length")
        client_key = bytes(a ^ b for a, b in zip(signature, proof, strict=True))
        if not hmac.compare_digest(hashlib.new(self._hash, client_key).digest(), self._stored_key):
            raise SaslError("Invalid client credentials")
        server_signature = hmac.new(self._server_key, auth_message, self._hash).digest()
        self.complete = True
        return b"v=" + base64.b64encode(server_signature)


def mechanism_server(mechanism: str, credentials: CredentialStore) -> SaslMechanismServer:
    if mechanism == "PLAIN":
        return PlainServer(credentials)
    return ScramServer(mechanism, credentials)
