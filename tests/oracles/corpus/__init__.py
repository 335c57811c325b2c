"""Job shapes nobody wrote for kafkatest, each correct and with the bugs that reach
production, for the oracles' catch matrix (`matrix.py`, tests/oracles/test_catch_matrix.py
and the table in docs/how-to/oracles.md)."""
