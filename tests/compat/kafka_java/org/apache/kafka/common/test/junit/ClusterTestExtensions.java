/*
 * kafkatest: stands in for Kafka's own ClusterTestExtensions (same name, so the service
 * entry in kafka-test-common-runtime loads this one when it is first on the classpath).
 * Kafka's starts an in-process cluster per test; this one hands each @ClusterTest,
 * @ClusterTests and @ClusterTemplate invocation an ExternalClusterInstance on the broker
 * named by system properties, cleaned of the previous test's topics and groups:
 *   kafkatest.bootstrap          one broker, for tests that ask for one
 *   kafkatest.bootstrap.cluster  several brokers, for tests that ask for more
 *   kafkatest.cluster.brokers    how many brokers that cluster has
 * A test that asks for more brokers than that, or for a security protocol other than
 * PLAINTEXT, is skipped (the same on both backends). Server properties a test sets
 * cannot be applied to a running broker; they are passed on in its ClusterConfig only.
 */
package org.apache.kafka.common.test.junit;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.common.test.ClusterInstance;
import org.apache.kafka.common.test.api.ClusterConfig;
import org.apache.kafka.common.test.api.ClusterConfigProperty;
import org.apache.kafka.common.test.api.ClusterTemplate;
import org.apache.kafka.common.test.api.ClusterTest;
import org.apache.kafka.common.test.api.ClusterTestDefaults;
import org.apache.kafka.common.test.api.ClusterTests;
import org.apache.kafka.common.test.api.Type;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

public class ClusterTestExtensions implements TestTemplateInvocationContextProvider {

    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
        Method method = context.getRequiredTestMethod();
        return method.isAnnotationPresent(ClusterTest.class)
            || method.isAnnotationPresent(ClusterTests.class)
            || method.isAnnotationPresent(ClusterTemplate.class);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
        Method method = context.getRequiredTestMethod();
        Class<?> testClass = context.getRequiredTestClass();
        List<ClusterConfig> configs = new ArrayList<>();
        ClusterTemplate template = method.getAnnotation(ClusterTemplate.class);
        if (template != null) configs.addAll(templateConfigs(testClass, template.value()));
        ClusterTests many = method.getAnnotation(ClusterTests.class);
        if (many != null) {
            for (ClusterTest one : many.value()) configs.add(configOf(one, testClass.getAnnotation(ClusterTestDefaults.class)));
        }
        ClusterTest one = method.getAnnotation(ClusterTest.class);
        if (one != null) configs.add(configOf(one, testClass.getAnnotation(ClusterTestDefaults.class)));
        List<TestTemplateInvocationContext> contexts = new ArrayList<>();
        for (ClusterConfig config : configs) {
            for (Type type : config.clusterTypes()) contexts.add(invocation(type, config));
        }
        return contexts.stream();
    }

    @SuppressWarnings("unchecked")
    private static List<ClusterConfig> templateConfigs(Class<?> testClass, String methodName) {
        try {
            Method supplier = testClass.getDeclaredMethod(methodName);
            supplier.setAccessible(true);
            return (List<ClusterConfig>) supplier.invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot call the @ClusterTemplate method " + methodName, e);
        }
    }

    private static ClusterConfig configOf(ClusterTest test, ClusterTestDefaults defaults) {
        Type[] types = test.types().length > 0 ? test.types()
            : defaults != null ? defaults.types() : new Type[] {Type.KRAFT, Type.CO_KRAFT};
        int brokers = test.brokers() > 0 ? test.brokers() : defaults != null ? defaults.brokers() : 1;
        Map<String, String> properties = new HashMap<>();
        if (defaults != null) {
            for (ClusterConfigProperty p : defaults.serverProperties()) properties.put(p.key(), p.value());
        }
        for (ClusterConfigProperty p : test.serverProperties()) {
            if (p.id() == -1) properties.put(p.key(), p.value());
        }
        return ClusterConfig.defaultBuilder()
            .setTypes(new HashSet<>(Arrays.asList(types)))
            .setBrokers(brokers)
            .setBrokerSecurityProtocol(test.brokerSecurityProtocol())
            .setServerProperties(properties)
            .setTags(Arrays.asList(test.tags()))
            .build();
    }

    private static TestTemplateInvocationContext invocation(Type type, ClusterConfig config) {
        return new TestTemplateInvocationContext() {
            private ExternalClusterInstance instance;

            @Override
            public String getDisplayName(int invocationIndex) {
                String tags = config.tags().isEmpty() ? "" : " " + String.join(",", config.tags());
                return "[" + invocationIndex + "] " + type + tags;
            }

            private ExternalClusterInstance instance() {
                if (instance == null) {
                    Assumptions.assumeTrue(config.brokerSecurityProtocol() == SecurityProtocol.PLAINTEXT,
                        "kafkatest runs these tests on a PLAINTEXT listener only");
                    int clusterBrokers = Integer.getInteger("kafkatest.cluster.brokers", 0);
                    String bootstrap = config.numBrokers() <= 1
                        ? System.getProperty("kafkatest.bootstrap")
                        : config.numBrokers() <= clusterBrokers ? System.getProperty("kafkatest.bootstrap.cluster") : null;
                    Assumptions.assumeTrue(bootstrap != null,
                        "asks for " + config.numBrokers() + " brokers; kafkatest's cluster has " + clusterBrokers);
                    instance = new ExternalClusterInstance(type, config, bootstrap);
                }
                return instance;
            }

            @Override
            public List<Extension> getAdditionalExtensions() {
                ParameterResolver resolver = new ParameterResolver() {
                    @Override
                    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
                        return parameter.getParameter().getType().equals(ClusterInstance.class);
                    }

                    @Override
                    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
                        return instance();
                    }
                };
                BeforeEachCallback prepare = context -> {
                    // A tool that calls Exit.exit must fail its test, not end the JVM (and
                    // every later test of the class with it); tests that expect an exit
                    // set their own procedure over this one.
                    Exit.setExitProcedure((status, message) -> {
                        throw new AssertionError("Exit.exit(" + status + "): " + message);
                    });
                    Exit.setHaltProcedure((status, message) -> {
                        throw new AssertionError("Exit.halt(" + status + "): " + message);
                    });
                    instance().clean();
                };
                return List.of(resolver, prepare);
            }
        };
    }
}
