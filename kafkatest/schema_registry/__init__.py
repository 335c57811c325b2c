"""An embedded Schema Registry speaking the Confluent REST API subset clients use.

`start_schema_registry()` serves one on loopback; `SchemaRegistry` is its state, usable
without HTTP. Errors carry Confluent's HTTP status, ``error_code`` and message.
"""

from kafkatest.schema_registry.errors import RegistryError
from kafkatest.schema_registry.server import SchemaRegistryServer, start_schema_registry
from kafkatest.schema_registry.state import SchemaRegistry

__all__ = ["RegistryError", "SchemaRegistry", "SchemaRegistryServer", "start_schema_registry"]
