from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

ORDER = '{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}'


def test_orders_go_through_the_registry(schema_registry):
    client = SchemaRegistryClient({"url": schema_registry.url})
    context = SerializationContext("orders", MessageField.VALUE)
    framed = AvroSerializer(client, ORDER)({"id": 1}, context)
    assert framed[0] == 0  # Confluent's wire format: magic byte, schema id, Avro body
    assert "orders-value" in client.get_subjects()  # TopicNameStrategy
    assert AvroDeserializer(client)(framed, context) == {"id": 1}
