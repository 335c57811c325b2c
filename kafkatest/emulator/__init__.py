"""An in-memory, wire-compatible Kafka broker for tests.

Three layers, each in its own package: `protocol` turns bytes into requests and
responses (no sockets), `state` is the broker's memory (no wire), and `server`
joins them over asyncio TCP listeners, one per emulated broker id.
"""
