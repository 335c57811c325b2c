"""Refusals of the broker state, each named after the Kafka error it becomes.

The state layer does not know error codes; handlers map `error_name` to the
wire code (see `server.handlers.errors`).
"""

from __future__ import annotations


class StateError(Exception):
    """Base: the message is what Kafka would put in error_message."""

    error_name = "unknown_server_error"


class UnknownServerError(StateError):
    """Where Kafka fails inside and answers without a message (an unknown operation
    type, an APPEND to a broker config it does not know): raise with ""."""


class UnknownTopicOrPartition(StateError):
    error_name = "unknown_topic_or_partition"


class UnknownTopicId(StateError):
    error_name = "unknown_topic_id"


class TopicAlreadyExists(StateError):
    error_name = "topic_already_exists"


class InvalidTopic(StateError):
    error_name = "invalid_topic_exception"


class InvalidPartitions(StateError):
    error_name = "invalid_partitions"


class InvalidReplicaAssignment(StateError):
    error_name = "invalid_replica_assignment"


class InvalidReplicationFactor(StateError):
    error_name = "invalid_replication_factor"


class InvalidConfig(StateError):
    error_name = "invalid_config"


class OffsetOutOfRange(StateError):
    error_name = "offset_out_of_range"


class MessageTooLarge(StateError):
    error_name = "message_too_large"


class CorruptMessage(StateError):
    error_name = "corrupt_message"


class InvalidRecord(StateError):
    error_name = "invalid_record"


class RecordsRejected(InvalidRecord):
    """Kafka's RecordValidationException: named records of a batch were refused.

    The produce response carries `record_errors` (index in the batch, message)
    and the log start offset beside the error message.
    """

    def __init__(self, record_errors: list[tuple[int, str]], log_start_offset: int) -> None:
        shown = ", ".join(
            f"RecordError(batchIndex={index}, message='{message}')"
            for index, message in record_errors[:3]
        )
        super().__init__(
            f"One or more records have been rejected due to {len(record_errors)} record errors "
            f"in total, and only showing the first three errors at most: [{shown}]"
        )
        self.record_errors = record_errors
        self.log_start_offset = log_start_offset


class TimestampsRejected(RecordsRejected):
    """Records refused for their timestamps: INVALID_TIMESTAMP, with record errors."""

    error_name = "invalid_timestamp"

    def __init__(self, record_errors: list[tuple[int, str]], log_start_offset: int) -> None:
        super().__init__(record_errors, log_start_offset)
        self.args = ("One or more records have been rejected due to invalid timestamp",)


class OutOfOrderSequence(StateError):
    error_name = "out_of_order_sequence_number"


class InvalidProducerEpoch(StateError):
    error_name = "invalid_producer_epoch"


class InvalidTxnState(StateError):
    error_name = "invalid_txn_state"


class InvalidRequest(StateError):
    error_name = "invalid_request"


class TopicDeletionDisabled(StateError):
    error_name = "topic_deletion_disabled"


class PolicyViolation(StateError):
    error_name = "policy_violation"


class BatchTooLarge(StateError):
    """More metadata records than Kafka's controller writes for one request.

    Kafka answers UNKNOWN_SERVER_ERROR with no message (its BoundedList overflows
    outside the ApiException path); the message here is for kafkatest's own callers.
    """


# -- transactions ---------------------------------------------------------------------


class ProducerFenced(StateError):
    error_name = "producer_fenced"


class ConcurrentTransactions(StateError):
    error_name = "concurrent_transactions"


class InvalidProducerIdMapping(StateError):
    error_name = "invalid_producer_id_mapping"


class InvalidTransactionTimeout(StateError):
    error_name = "invalid_transaction_timeout"


class TransactionalIdNotFound(StateError):
    error_name = "transactional_id_not_found"


class TransactionAbortable(StateError):
    error_name = "transaction_abortable"


class NotEnoughReplicas(StateError):
    error_name = "not_enough_replicas"


class PreferredLeaderNotAvailable(StateError):
    error_name = "preferred_leader_not_available"


class EligibleLeadersNotAvailable(StateError):
    error_name = "eligible_leaders_not_available"


class ElectionNotNeeded(StateError):
    error_name = "election_not_needed"


class InvalidUpdateVersion(StateError):
    error_name = "invalid_update_version"
