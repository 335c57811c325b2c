"""An in-memory, wire-compatible Kafka broker for tests: a library of its own.

Its layers, each a package, from the bottom: `protocol` turns bytes into requests
and responses (no sockets, no state), `state` is the broker's memory (no wire),
`server` joins them over asyncio TCP listeners, one per emulated broker id, and
`control` intercepts requests on their way to a handler (fault rules, the pause
gate: kfake's ControlKey). `runner` starts it all on a thread. The emulator imports
nothing of kafkatest but the codec (`kafkatest.kio_codec`) and `kafkatest.errors`;
the harness, the standalone server and the fuzzer sit above it (ARCHITECTURE.md,
enforced by the import contracts in pyproject.toml).
"""

# Before any subpackage defines a kio type (control/errors.py does, and a broker may
# import it first): kio's hypothesis hooks stay off (tests/emulator/test_kio_codec.py).
import kafkatest.kio_codec  # noqa: F401
