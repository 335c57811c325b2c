"""DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554).

What `kafka-configs --entity-type users --alter --add-config SCRAM-SHA-512=[...]`
sends: the client salts the password itself, so the broker stores only what it
derives from the salted password. Authorization (DESCRIBE / ALTER on the cluster)
is dispatch's business, as for every API.
"""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from kafkatest.emulator.server.context import RequestContext
from kafkatest.emulator.server.handlers import handles
from kafkatest.emulator.server.pacing import Pacer
from kafkatest.emulator.server.repeats import Encoded
from kafkatest.emulator.server.responses import make, respond, response_types


@handles(50, 0, 0)
async def describe_user_scram_credentials(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    users = None if request.users is None else [u.name for u in request.users]
    results = Encoded()
    pacer = Pacer()  # one answer per user named, encoded as made, the loop given back
    for user, error, message, infos in ctx.state.credentials.describe(users):
        results.add(
            respond(
                types.DescribeUserScramCredentialsResult,
                ErrorCode[error],
                message,
                user=user,
                credential_infos=tuple(
                    make(types.CredentialInfo, mechanism=mechanism, iterations=iterations)
                    for mechanism, iterations in infos
                ),
            )
        )
        await pacer.breathe()
    return respond(
        types.DescribeUserScramCredentialsResponse, ErrorCode.none, "", results=results.items()
    )


@handles(51, 0, 0)
async def alter_user_scram_credentials(ctx: RequestContext, request: Any) -> Any:
    types = response_types(ctx)
    results = ctx.state.credentials.alter(
        [(d.name, d.mechanism) for d in request.deletions],
        [
            (u.name, u.mechanism, u.iterations, bytes(u.salt), bytes(u.salted_password))
            for u in request.upsertions
        ],
    )
    answers = Encoded()
    pacer = Pacer()
    for user, error, message in results:
        answers.add(
            respond(types.AlterUserScramCredentialsResult, ErrorCode[error], message, user=user)
        )
        await pacer.breathe()
    return respond(types.AlterUserScramCredentialsResponse, results=answers.items())
