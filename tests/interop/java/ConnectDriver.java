import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.apache.kafka.connect.runtime.Herder;
import org.apache.kafka.connect.runtime.Worker;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;
import org.apache.kafka.connect.runtime.distributed.DistributedHerder;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.runtime.rest.RestClient;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.storage.ConfigBackingStore;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.KafkaConfigBackingStore;
import org.apache.kafka.connect.storage.KafkaOffsetBackingStore;
import org.apache.kafka.connect.storage.KafkaStatusBackingStore;
import org.apache.kafka.connect.storage.StatusBackingStore;
import org.apache.kafka.connect.util.ConnectUtils;
import org.apache.kafka.connect.util.FutureCallback;
import org.apache.kafka.connect.util.SharedTopicAdmin;

/**
 * A Kafka Connect 4.3 distributed worker against franz: the real DistributedHerder, Worker and
 * Kafka-backed offset, config and status stores, built as ConnectDistributed.createHerder builds
 * them, but driven through the herder's own calls instead of its REST server (which cannot start
 * here: see tests/support/java_client.py).
 *
 * file BOOTSTRAP DIR EXACTLY_ONCE LINES
 *   makes (or finds, on a second run) a FileStreamSource of DIR/in.txt into topic connect-lines and
 *   a FileStreamSink of that topic into DIR/out.txt, waits until out.txt holds LINES lines, prints
 *   "created NAME BOOL", "out N", "status NAME CONNECTOR_STATE TASK_STATE" and "source-position N"
 *   (the source's offset as the offsets topic holds it, once it names the end of in.txt or the
 *   deadline passed), then stops the worker and prints "stopped".
 * postgres BOOTSTRAP DIR EXACTLY_ONCE LINES HOST:PORT
 *   the same with Debezium's PostgresConnector as the source (pgoutput, table public.items of
 *   database postgres, user postgres, change events as JSON without schemas into dbz.public.items),
 *   and no "source-position" line.
 */
public class ConnectDriver {
    static final long DEADLINE_MS = 90_000;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[1];
        Path dir = Paths.get(args[2]);
        Map<String, String> props = new HashMap<>();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", "connect-cluster");
        props.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        props.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
        for (String store : List.of("offset", "config", "status")) {
            props.put(store + ".storage.topic", "connect-" + (store.equals("status") ? "status" : store + "s"));
            props.put(store + ".storage.replication.factor", "1");
        }
        props.put("exactly.once.source.support", args[3]);
        props.put("offset.flush.interval.ms", "500");
        props.put("plugin.discovery", "only_scan");
        DistributedHerder herder = herder(props);
        herder.start();
        try {
            boolean postgres = args[0].equals("postgres");
            Map<String, Map<String, String>> connectors = new LinkedHashMap<>();
            connectors.put("src", postgres ? debeziumSource(args[5]) : Map.of("name", "src", "tasks.max", "1",
                "connector.class", "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "file", dir.resolve("in.txt").toString(), "topic", "connect-lines"));
            connectors.put("sink", Map.of("name", "sink", "tasks.max", "1",
                "connector.class", "org.apache.kafka.connect.file.FileStreamSinkConnector",
                "file", dir.resolve("out.txt").toString(), "topics", postgres ? "dbz.public.items" : "connect-lines"));
            for (Map.Entry<String, Map<String, String>> connector : connectors.entrySet()) {
                FutureCallback<Herder.Created<ConnectorInfo>> created = new FutureCallback<>();
                herder.putConnectorConfig(connector.getKey(), connector.getValue(), true, created);
                System.out.println("created " + connector.getKey() + " " + created.get(60, TimeUnit.SECONDS).created());
            }
            int wanted = Integer.parseInt(args[4]);
            Path out = dir.resolve("out.txt");
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            int lines = 0;
            while (System.currentTimeMillis() < deadline) {
                lines = Files.exists(out) ? Files.readAllLines(out).size() : 0;
                if (lines >= wanted) break;
                Thread.sleep(100);
            }
            System.out.println("out " + lines);
            for (String name : connectors.keySet()) {
                ConnectorStateInfo status = herder.connectorStatus(name);
                System.out.println("status " + name + " " + status.connector().state() + " " + status.tasks().get(0).state());
            }
            if (!postgres) printSourcePosition(herder, dir.resolve("in.txt"), deadline);
        } finally {
            herder.stop();
        }
        System.out.println("stopped");
    }

    /** The file source's offsets are flushed apart from its records (every offset.flush.interval.ms,
     *  or with each transaction): they are printed once they name the end of the file. */
    static void printSourcePosition(DistributedHerder herder, Path file, long deadline) throws Exception {
        long size = Files.size(file);
        Object position = null;
        while (System.currentTimeMillis() < deadline && !atEnd(position, size)) {
            FutureCallback<ConnectorOffsets> offsets = new FutureCallback<>();
            herder.connectorOffsets("src", offsets);
            position = offsets.get(60, TimeUnit.SECONDS).offsets().stream()
                .map(offset -> offset.offset().get("position")).findFirst().orElse(null);
            if (!atEnd(position, size)) Thread.sleep(100);
        }
        System.out.println("source-position " + position);
    }

    static Map<String, String> debeziumSource(String hostPort) {
        String[] at = hostPort.split(":");
        Map<String, String> config = new HashMap<>();
        config.put("name", "src");
        config.put("tasks.max", "1");
        config.put("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        config.put("database.hostname", at[0]);
        config.put("database.port", at[1]);
        config.put("database.user", "postgres");
        config.put("database.password", "unused");  // the test's server trusts local connections
        config.put("database.dbname", "postgres");
        config.put("topic.prefix", "dbz");
        config.put("plugin.name", "pgoutput");
        config.put("table.include.list", "public.items");
        config.put("tombstones.on.delete", "false");
        for (String converter : List.of("key", "value")) {
            config.put(converter + ".converter", "org.apache.kafka.connect.json.JsonConverter");
            config.put(converter + ".converter.schemas.enable", "false");
        }
        return config;
    }

    static boolean atEnd(Object position, long size) {
        return position instanceof Number && ((Number) position).longValue() == size;
    }

    /** ConnectDistributed.createHerder's herder, advertising a REST address nothing listens on. */
    static DistributedHerder herder(Map<String, String> props) {
        Plugins plugins = new Plugins(props);
        plugins.compareAndSwapWithDelegatingLoader();
        DistributedConfig config = new DistributedConfig(props);
        String clusterId = config.kafkaClusterId();
        ConnectorClientConfigOverridePolicy policy = plugins.newPlugin(
            config.getString(WorkerConfig.CONNECTOR_CLIENT_POLICY_CLASS_CONFIG), config,
            ConnectorClientConfigOverridePolicy.class);
        String clientIdBase = ConnectUtils.clientIdBase(config);
        Map<String, Object> adminProps = new HashMap<>(config.originals());
        ConnectUtils.addMetricsContextProperties(adminProps, config, clusterId);
        adminProps.put("client.id", clientIdBase + "shared-admin");
        SharedTopicAdmin sharedAdmin = new SharedTopicAdmin(adminProps);
        KafkaOffsetBackingStore offsets = new KafkaOffsetBackingStore(sharedAdmin, () -> clientIdBase,
            plugins.newInternalConverter(true, JsonConverter.class.getName(),
                Map.of(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "false")));
        offsets.configure(config);
        Worker worker = new Worker("127.0.0.1:8083", Time.SYSTEM, plugins, config, offsets, policy);
        Converter internal = worker.getInternalValueConverter();
        StatusBackingStore status = new KafkaStatusBackingStore(Time.SYSTEM, internal, sharedAdmin, clientIdBase);
        status.configure(config);
        ConfigBackingStore configs = new KafkaConfigBackingStore(internal, config, worker.configTransformer(),
            sharedAdmin, clientIdBase);
        return new DistributedHerder(config, Time.SYSTEM, worker, clusterId, status, configs,
            "http://127.0.0.1:8083/", new RestClient(config), policy, List.of(), sharedAdmin);
    }
}
