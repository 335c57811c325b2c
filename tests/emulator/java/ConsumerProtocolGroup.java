// Two Java kafka-clients consumers with group.protocol=consumer (KIP-848) in one group:
// the first takes every partition, the second joins and the broker moves half of them
// (revoked by the first before the second gets them), then the second leaves and the
// first gets them back. Prints each step's assignments for the test to compare.
// Run with `java -cp <kafka-clients 4.x jars> ConsumerProtocolGroup.java bootstrap topic group partitions`.

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class ConsumerProtocolGroup {
    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int partitions = Integer.parseInt(args[3]);
        try (KafkaConsumer<String, String> first = consumer(bootstrap, group, "first")) {
            first.subscribe(List.of(topic));
            await(List.of(first), owned -> owned.get(0).size() == partitions);
            System.out.println("alone " + owned(first));
            try (KafkaConsumer<String, String> second = consumer(bootstrap, group, "second")) {
                second.subscribe(List.of(topic));
                await(List.of(first, second), owned ->
                    owned.get(0).size() == partitions / 2 && owned.get(1).size() == partitions / 2);
                Set<Integer> both = new TreeSet<>(owned(first));
                both.addAll(owned(second));
                System.out.println("shared " + owned(first).size() + " " + owned(second).size() + " " + both);
            }
            await(List.of(first), owned -> owned.get(0).size() == partitions);
            System.out.println("back " + owned(first));
        }
    }

    static KafkaConsumer<String, String> consumer(String bootstrap, String group, String clientId) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("group.protocol", "consumer");
        props.put("client.id", clientId);
        props.put("auto.offset.reset", "earliest");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaConsumer<>(props);
    }

    static Set<Integer> owned(KafkaConsumer<String, String> consumer) {
        Set<Integer> owned = new TreeSet<>();
        for (TopicPartition partition : consumer.assignment()) {
            owned.add(partition.partition());
        }
        return owned;
    }

    static void await(List<KafkaConsumer<String, String>> consumers, Predicate<List<Set<Integer>>> done) {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            List<Set<Integer>> owned = consumers.stream().map(ConsumerProtocolGroup::owned).toList();
            if (done.test(owned)) {
                return;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("assignments never settled: " + owned);
            }
            for (KafkaConsumer<String, String> consumer : consumers) {
                consumer.poll(Duration.ofMillis(50));
            }
        }
    }
}
