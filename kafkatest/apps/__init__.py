"""Applications built on the emulator and the harness, outside the emulator library.

The standalone server (`kafkatest emulator`, `python -m kafkatest.emulator`), the
HTTP fault control it serves, and the wire fuzzer: each drives an emulator
through the harness's backends, so none of them may live inside the emulator,
which imports nothing of the harness (see ARCHITECTURE.md).
"""
