// A Java kafka-clients group consumer (the client Spark ships) for the emulator's
// group tests: subscribe, read `count` records, commit, then report what the
// broker says about the group. Run with `java -cp <kafka-clients jars> GroupConsumer.java`.

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class GroupConsumer {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int count = Integer.parseInt(args[3]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        props.put("heartbeat.interval.ms", "100");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            int read = 0;
            long deadline = System.currentTimeMillis() + 30_000;
            while (read < count) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("read only " + read + " of " + count);
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    System.out.println("record " + record.partition() + " " + record.value());
                    read++;
                }
            }
            consumer.commitSync();
            List<TopicPartition> owned = new ArrayList<>(consumer.assignment());
            owned.sort(Comparator.comparingInt(TopicPartition::partition));
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.copyOf(owned));
            for (TopicPartition partition : owned) {
                System.out.println("committed " + partition.partition() + " " + committed.get(partition).offset());
            }
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
                ConsumerGroupDescription description =
                        admin.describeConsumerGroups(Set.of(group)).describedGroups().get(group).get();
                System.out.println("state " + description.state());
                System.out.println("members " + description.members().size());
            }
        }
    }
}
