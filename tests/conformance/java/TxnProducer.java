// Kafka's own Java transactional producer (kafka-clients 4.1, the client a Kafka 4.1
// cluster's tools ship) for the transaction conformance tests: a committed
// transaction with offsets sent to a group, an aborted one, a fenced zombie, then
// what DescribeTransactions says. Run with `java -cp <kafka jars> TxnProducer.java
// <bootstrap> <topic> <transactional id> <group>`.

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnProducer {
    static KafkaProducer<String, String> producer(String bootstrap, String transactionalId) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("transactional.id", transactionalId);
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        KafkaProducer<String, String> producer = new KafkaProducer<>(props);
        producer.initTransactions();
        return producer;
    }

    static void describe(Admin admin, String transactionalId, String when) throws Exception {
        TransactionDescription d = admin.describeTransactions(List.of(transactionalId))
            .description(transactionalId).get();
        System.out.println(when + " " + d.state() + " epoch " + d.producerEpoch()
            + " partitions " + d.topicPartitions().size());
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], transactionalId = args[2], group = args[3];
        Properties adminProps = new Properties();
        adminProps.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(adminProps)) {
            KafkaProducer<String, String> first = producer(bootstrap, transactionalId);
            describe(admin, transactionalId, "initialized");
            first.beginTransaction();
            first.send(new ProducerRecord<>(topic, 0, "k", "c1"));
            first.send(new ProducerRecord<>(topic, 0, "k", "c2"));
            first.sendOffsetsToTransaction(
                Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(5)),
                new ConsumerGroupMetadata(group));
            first.flush();
            describe(admin, transactionalId, "open");
            first.commitTransaction();
            describe(admin, transactionalId, "committed");
            first.beginTransaction();
            first.send(new ProducerRecord<>(topic, 0, "k", "a1"));
            first.flush();
            first.abortTransaction();
            describe(admin, transactionalId, "aborted");
            first.beginTransaction();
            first.send(new ProducerRecord<>(topic, 0, "k", "zombie"));
            first.flush();
            KafkaProducer<String, String> second = producer(bootstrap, transactionalId);
            describe(admin, transactionalId, "fenced");
            try {
                first.commitTransaction();
                System.out.println("zombie committed");
            } catch (ProducerFencedException e) {
                System.out.println("zombie fenced");
            }
            first.close();
            second.beginTransaction();
            second.send(new ProducerRecord<>(topic, 0, "k", "c3"));
            second.commitTransaction();
            describe(admin, transactionalId, "successor");
            second.close();
            System.out.println("offset " + admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get().get(new TopicPartition(topic, 0)).offset());
        }
    }
}
