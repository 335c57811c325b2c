"""Every bound on a value a test, a client or a file gives kafkatest, declared once.

A value past these is a mistake (a unit slip, a corrupt file, a hostile request),
never a test: it is refused with a message naming the field, the value and the
bound, before anything changes. The Python API, the HTTP control interface, the
command line, scenario files and capture files all check against these same
names, and the emulator's own clock and topic configs too (it may import this
module, which imports nothing).
"""

from __future__ import annotations

# -- time ------------------------------------------------------------------------------

MS_PER_YEAR = 365 * 86_400_000
#: The longest one move of a broker's clock (advance_clock, kafka_broker.clock.advance,
#: age_out_records' retention_ms, which it ages records by): 100 years.
MAX_CLOCK_STEP_MS = 100 * MS_PER_YEAR
#: The latest instant a broker's clock may show, 9999-12-31T23:59:59.999Z: every
#: timestamp up to it is a Kafka long, a Python datetime and a JSON number.
MAX_CLOCK_MS = 253_402_300_799_999
#: A request's extra latency (slow_fetch, inject latency...): longer than any test
#: waits (clients give a request up after 30 s).
MAX_LATENCY_MS = 300_000
#: A wait or time-out in a scenario file: an hour (pytest's own time-outs are shorter).
MAX_WAIT_S = 3_600

# -- Kafka's numbers ---------------------------------------------------------------------

#: Kafka's long (offsets, timestamps, retention.ms...): 2^63 - 1.
MAX_LONG = 2**63 - 1
#: Kafka's int (partition indexes, counts on the wire).
MAX_INT = 2**31 - 1
#: The largest offset a record may have: one below Kafka's long, so that the next
#: offset (a log end, a high watermark) is still a long.
MAX_OFFSET = MAX_LONG - 1

# -- records a test writes ---------------------------------------------------------------

#: The most partitions one topic may have: Kafka's controller refuses a CreateTopics
#: asking for more in all (ReplicationControlManager.MAX_PARTITIONS_PER_BATCH).
MAX_PARTITIONS = 10_000
#: Records one seed (a scenario's seed step, a capture replayed) may write.
MAX_SEED_RECORDS = 1_000_000

# -- files and request bodies --------------------------------------------------------------

#: How deep JSON (or YAML) may nest: a record's value, a control request's body, a
#: scenario file. Deeper is refused before any code walks it.
MAX_NESTING = 100
#: One line of a capture file (a record with its key, value and headers, as JSON).
MAX_CAPTURE_LINE_BYTES = 64 << 20
#: A capture or fixture file that seeds a topic, decompressed: a gzip bomb stops here,
#: whatever its ratio.
MAX_SEED_FILE_BYTES = 1 << 30
#: A scenario file.
MAX_SCENARIO_BYTES = 1 << 20

# -- what the emulator keeps for a test -----------------------------------------------------

#: One request as the request log keeps it (its decoded fields, in estimated Python
#: bytes); what is past it is summarised ("... 44,990 more").
MAX_REQUEST_LOG_ENTRY_BYTES = 256 << 10
#: The whole request log: the oldest entries go first once past it (as past its count).
MAX_REQUEST_LOG_BYTES = 64 << 20
#: A string the request log keeps whole (a longer one is cut, its length said).
MAX_REQUEST_LOG_STRING = 1 << 10
