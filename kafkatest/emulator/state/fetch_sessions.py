"""Fetch sessions (KIP-227): what a broker remembers between a client's fetches.

A session lets a consumer send only the partitions whose fetch position changed
and receive only the partitions with something new (records, a moved high
watermark or log start, an error). Kafka keeps sessions per broker in a bounded
cache (``max.incremental.fetch.session.cache.slots``, 1000); when it is full a new
session may evict one idle for ``min.incremental.fetch.session.eviction.ms``
(2 minutes) or a smaller one, and otherwise the client is told "no session"
(id 0) and keeps fetching in full, which every client supports.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

#: The epoch of a request that opens a session, and of one that fetches without one.
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
NO_SESSION = 0
MAX_SESSIONS = 1000
EVICTION_IDLE_S = 120.0

#: A partition in a session: (topic id or, before Fetch v13, topic name, index).
PartitionKey = tuple[uuid.UUID | str, int]
#: A forgotten partition as the request names it: None for the all-zero topic id.
ForgottenKey = tuple[uuid.UUID | str | None, int]
#: The all-zero topic id, which kio reads as None: it names no topic, yet a session
#: keeps a partition of it by that id, as Kafka's does.
ZERO_TOPIC_ID = uuid.UUID(int=0)


@dataclass(slots=True)
class SessionPartition:
    """What the client last asked of one partition and what it was last told."""

    topic: str | None
    topic_id: uuid.UUID | None
    partition: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int
    high_watermark: int = -1
    log_start_offset: int = -1

    def key(self, uses_topic_ids: bool) -> PartitionKey:
        """Its key in a session: requests name it by id from Fetch v13, else by name."""
        topic = self.topic_id if uses_topic_ids else self.topic
        # Only the zero id is None: a name is never null before v13.
        return ZERO_TOPIC_ID if topic is None else topic, self.partition

    def must_send(
        self, error: bool, has_records: bool, high_watermark: int, log_start: int
    ) -> bool:
        """Whether an incremental response includes this partition, remembering what
        it tells; an error forgets the high watermark so the next answer repeats it
        (Kafka's CachedPartition.maybeUpdateResponseData)."""
        send = has_records or error
        if high_watermark != self.high_watermark:
            send = True
            self.high_watermark = high_watermark
        if log_start != self.log_start_offset:
            send = True
            self.log_start_offset = log_start
        if error:
            self.high_watermark = -1
        return send


@dataclass(slots=True)
class FetchSession:
    session_id: int
    uses_topic_ids: bool
    #: Insertion-ordered; partitions sent in a response move to the end, so that
    #: byte limits share out fairly across fetches as Kafka's sessions do.
    partitions: dict[PartitionKey, SessionPartition]
    #: The epoch the client's next incremental request must carry.
    epoch: int = 1
    last_used: float = field(default_factory=time.monotonic)

    def update(
        self, changed: Iterable[SessionPartition], forgotten: Iterable[ForgottenKey]
    ) -> None:
        """Apply an incremental request: new or changed partitions, then removals."""
        for part in changed:
            key = part.key(self.uses_topic_ids)
            known = self.partitions.get(key)
            if known is None:
                self.partitions[key] = part
            else:
                known.fetch_offset = part.fetch_offset
                known.max_bytes = part.max_bytes
                known.current_leader_epoch = part.current_leader_epoch
        for topic, partition in forgotten:
            self.partitions.pop((ZERO_TOPIC_ID if topic is None else topic, partition), None)

    def advance(self) -> None:
        self.epoch = 1 if self.epoch >= 2**31 - 1 else self.epoch + 1
        self.last_used = time.monotonic()

    def move_to_end(self, key: PartitionKey) -> None:
        self.partitions[key] = self.partitions.pop(key)


class FetchSessionCache:
    """One broker's sessions; lost when the broker restarts, as in Kafka."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self.max_sessions = max_sessions
        self._sessions: dict[int, FetchSession] = {}
        self._random = random.Random()

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    def remove(self, session_id: int) -> None:
        self._sessions.pop(session_id, None)

    def create(
        self, uses_topic_ids: bool, partitions: dict[PartitionKey, SessionPartition]
    ) -> FetchSession | None:
        """A new session, or None when the cache is full of sessions worth keeping."""
        if len(self._sessions) >= self.max_sessions and not self._evict_one(len(partitions)):
            return None
        session_id = NO_SESSION
        while session_id == NO_SESSION or session_id in self._sessions:
            session_id = self._random.randint(1, 2**31 - 1)
        session = FetchSession(session_id, uses_topic_ids, partitions)
        self._sessions[session_id] = session
        return session

    def _evict_one(self, size: int) -> bool:
        """Evict the least recently used session if it is idle or smaller than `size`."""
        oldest = min(self._sessions.values(), key=lambda s: s.last_used)
        idle = time.monotonic() - oldest.last_used >= EVICTION_IDLE_S
        if idle or len(oldest.partitions) < size:
            del self._sessions[oldest.session_id]
            return True
        return False
