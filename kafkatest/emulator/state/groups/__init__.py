"""Group coordination: who is in a group, what each member owns, what it committed.

- `classic/`: the JoinGroup / SyncGroup / Heartbeat protocol (its states and the events
  that move between them: `classic/model.py:TRANSITIONS`), and a classic group's offset
  commit rules.
- `consumer/`: KIP-848's ConsumerGroupHeartbeat protocol, its server-side assignors
  and the classic members a consumer group can hold.
- `offsets.py`: the committed offsets both share (and transactions write).
- `namespace.py`, `migration.py`, `registry.py`, `lookups.py`: one group id space for
  both protocols, and a group's upgrade from one to the other.
- `records.py`, `configs.py`, `clock.py`: what groups write to ``__consumer_offsets``,
  per-group configs, and the timers every coordinator uses.

The package imports no module of it at import time, so each coordinator module names
exactly what it needs.
"""
