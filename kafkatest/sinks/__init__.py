"""Read back what a job wrote: Kafka topics, files, the memory sink, foreachBatch.

Every reader gives plain rows (a list of dicts) and a Spark DataFrame, and the
rows feed the delivery assertions directly.
"""

from kafkatest.sinks.batches import BatchCapture
from kafkatest.sinks.files import file_frame, file_rows
from kafkatest.sinks.frames import frame_of, rows_of
from kafkatest.sinks.memory import memory_frame, memory_rows
from kafkatest.sinks.topic import topic_frame, topic_rows

__all__ = [
    "BatchCapture",
    "file_frame",
    "file_rows",
    "frame_of",
    "memory_frame",
    "memory_rows",
    "rows_of",
    "topic_frame",
    "topic_rows",
]
