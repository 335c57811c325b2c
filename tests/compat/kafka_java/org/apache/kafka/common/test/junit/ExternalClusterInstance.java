/*
 * kafkatest: Apache Kafka's @ClusterTest harness pointed at a broker that is already
 * running (the emulator or a kafkatest-started Kafka), so Kafka's own integration tests
 * can be held against both. Our code, not Kafka's: it implements Kafka's published
 * ClusterInstance interface (kafka-test-common-runtime) with admin-client calls only.
 */
package org.apache.kafka.common.test.junit;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import kafka.network.SocketServer;
import kafka.server.ControllerServer;
import kafka.server.KafkaBroker;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.GroupProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.test.ClusterInstance;
import org.apache.kafka.common.test.api.ClusterConfig;
import org.apache.kafka.common.test.api.Type;
import org.apache.kafka.server.authorizer.Authorizer;
import org.apache.kafka.server.fault.FaultHandlerException;
import org.mockito.Mockito;

/**
 * A running broker seen only through its client port. What a test can only do with an
 * in-process broker (reach its KafkaBroker, SocketServer or controller, stop a broker)
 * throws UnsupportedOperationException, so that test fails the same way on both backends.
 */
public class ExternalClusterInstance implements ClusterInstance {
    private static final long WAIT_MS = 30_000;

    private final Type type;
    private final ClusterConfig config;
    private final String bootstrapServers;

    public ExternalClusterInstance(Type type, ClusterConfig config, String bootstrapServers) {
        this.type = type;
        this.config = config;
        this.bootstrapServers = bootstrapServers;
    }

    private static UnsupportedOperationException notExternal(String what) {
        return new UnsupportedOperationException(
            what + " needs an in-process Kafka; kafkatest runs this test against a broker's client port");
    }

    @Override public Type type() { return type; }
    @Override public ClusterConfig config() { return config; }
    @Override public String bootstrapServers() { return bootstrapServers; }
    @Override public ListenerName clientListener() { return ListenerName.forSecurityProtocol(SecurityProtocol.PLAINTEXT); }
    @Override public ListenerName controllerListenerName() { return new ListenerName("CONTROLLER"); }
    @Override public Map<Integer, KafkaBroker> brokers() { throw notExternal("brokers()"); }
    @Override public Map<Integer, ControllerServer> controllers() { throw notExternal("controllers()"); }
    @Override public Set<Integer> controllerIds() { throw notExternal("controllerIds()"); }
    @Override public String bootstrapControllers() { throw notExternal("bootstrapControllers()"); }
    @Override public Collection<SocketServer> controllerSocketServers() { throw notExternal("controllerSocketServers()"); }
    @Override public void shutdownBroker(int brokerId) { throw notExternal("shutdownBroker()"); }
    @Override public void startBroker(int brokerId) { throw notExternal("startBroker()"); }
    @Override public Optional<FaultHandlerException> firstFatalException() { return Optional.empty(); }
    @Override public Optional<FaultHandlerException> firstNonFatalException() { return Optional.empty(); }
    @Override public void start() { }
    @Override public boolean started() { return true; }
    @Override public void stop() { }
    @Override public boolean stopped() { return false; }
    @Override public List<Authorizer> authorizers() { return List.of(); }
    @Override public Set<GroupProtocol> supportedGroupProtocols() { return Set.of(GroupProtocol.CLASSIC, GroupProtocol.CONSUMER); }

    /**
     * Kafka's request-level tests (IntegrationTestUtils.connect) only ask a SocketServer
     * for its port, then talk the wire protocol to it: one stand-in per bootstrap address.
     */
    @Override
    public Collection<SocketServer> brokerSocketServers() {
        List<SocketServer> servers = new ArrayList<>();
        for (String address : bootstrapServers.split(",")) {
            int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
            SocketServer server = Mockito.mock(SocketServer.class);
            Mockito.when(server.boundPort(Mockito.any())).thenReturn(port);
            servers.add(server);
        }
        return servers;
    }

    @Override
    public Set<Integer> brokerIds() {
        try (Admin admin = admin()) {
            return admin.describeCluster().nodes().get().stream().map(n -> n.id()).collect(Collectors.toSet());
        } catch (ExecutionException | InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    @Override
    public String clusterId() {
        try (Admin admin = admin()) {
            return admin.describeCluster().clusterId().get();
        } catch (ExecutionException | InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    @Override
    public void waitForReadyBrokers() throws InterruptedException {
        waitFor(() -> brokerIds().size() >= config.numBrokers(), config.numBrokers() + " brokers registered");
    }

    @Override
    public void createTopic(String topic, int partitions, short replicas, Map<String, String> configs) throws InterruptedException {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, replicas).configs(configs))).all().get();
        } catch (ExecutionException e) {
            throw new RuntimeException(e.getCause());
        }
        waitForTopic(topic, partitions);
    }

    @Override
    public void deleteTopic(String topic) throws InterruptedException {
        try (Admin admin = admin()) {
            admin.deleteTopics(List.of(topic)).all().get();
        } catch (ExecutionException e) {
            throw new RuntimeException(e.getCause());
        }
        waitTopicDeletion(topic);
    }

    @Override
    public void waitTopicDeletion(String topic) throws InterruptedException {
        waitForTopic(topic, 0);
    }

    /** Until the topic has `partitions` partitions, each with a leader (0: until it is gone). */
    @Override
    public void waitForTopic(String topic, int partitions) throws InterruptedException {
        waitFor(() -> partitionsWithLeaders(topic) == partitions, topic + " with " + partitions + " partitions");
    }

    private int partitionsWithLeaders(String topic) {
        try (Admin admin = admin()) {
            TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            boolean led = description.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty());
            return led ? description.partitions().size() : -1;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) return 0;
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    @Override
    public void waitAcls(AclBindingFilter filter, Collection<AccessControlEntry> entries) throws InterruptedException {
        waitFor(() -> {
            try (Admin admin = admin()) {
                Set<AccessControlEntry> present = admin.describeAcls(filter).values().get().stream()
                    .map(AclBinding::entry).collect(Collectors.toSet());
                return present.containsAll(entries);
            } catch (ExecutionException | InterruptedException e) {
                return false;
            }
        }, "ACLs " + entries);
    }

    @Override
    public int getLeaderBrokerId(TopicPartition partition) throws ExecutionException, InterruptedException {
        try (Admin admin = admin()) {
            TopicDescription description = admin.describeTopics(List.of(partition.topic())).allTopicNames().get().get(partition.topic());
            return description.partitions().get(partition.partition()).leader().id();
        }
    }

    /** Delete what an earlier test of the same class left: topics and groups. */
    void clean() throws InterruptedException {
        try (Admin admin = admin(Map.of(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000))) {
            Set<String> topics = admin.listTopics().names().get();
            if (!topics.isEmpty()) admin.deleteTopics(topics).all().get();
            List<String> groups = new ArrayList<>();
            admin.listGroups().all().get().forEach(g -> groups.add(g.groupId()));
            if (!groups.isEmpty()) {
                try {
                    admin.deleteConsumerGroups(groups).all().get();
                } catch (ExecutionException e) {
                    // A group with members left over cannot be deleted; the next test may see it.
                }
            }
            for (String topic : topics) waitTopicDeletion(topic);
        } catch (ExecutionException e) {
            throw new RuntimeException("could not clean the broker between tests", e.getCause());
        }
    }

    private static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what);
            Thread.sleep(100);
        }
    }
}
