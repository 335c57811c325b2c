"""The Apache Kafka release the emulator answers as.

Its tables (ApiVersions' ranges in the handlers' `@handles`, the feature levels in
`state/features.py`, the broker configs and loggers in `state/data/`) are that
release's, captured from the `kafka` backend running it; the `kafka` backend runs it
by default (`kafkatest.jars.coordinates.DEFAULT_KAFKA_VERSION`, held equal by
`tests/emulator/test_api_surface_wire.py`). Moving to another release is: capture its
answers, update those tables, and this line.
"""

#: The release, as Maven Central names it.
KAFKA_RELEASE = "4.3.1"
