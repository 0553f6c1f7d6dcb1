import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.internals.AsyncKafkaConsumer;
import org.apache.kafka.clients.consumer.internals.StreamsRebalanceData;
import org.apache.kafka.clients.consumer.internals.StreamsRebalanceListener;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.StreamsGroupHeartbeatResponseData;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A member of a KIP-1071 streams group, and the admin calls on streams groups, built from kafka-clients 4.3
 * alone: the consumer Kafka Streams' StreamThread makes for group.protocol=streams (an AsyncKafkaConsumer given a
 * StreamsRebalanceData), without a Kafka Streams runtime. Every line it prints is one JSON object.
 *
 * member BOOTSTRAP --group G --topology-json JSON [options]
 *     joins G with the topology JSON describes, subscribes to its source and repartition source topics, polls
 *     and prints what happens, then closes the consumer (leaving the group) and prints {"event": "closed"}.
 *     JSON: {"subtopologies": {"0": {"source_topics": ["in"], "repartition_sink_topics": [],
 *            "repartition_source_topics": {"app-r": {"partitions": 2, "replication_factor": 1, "configs": {}}},
 *            "state_changelog_topics": {"app-s-changelog": {"configs": {"cleanup.policy": "compact"}}},
 *            "copartition_groups": [["in", "app-r"]]}}}
 *     (every key of a subtopology may be left out; "partitions" and "replication_factor" too: unset).
 *     Options: --process-id UUID, --endpoint HOST:PORT, --rack R, --client-tag K=V (repeatable),
 *     --client-id C, --property K=V (a consumer property, repeatable), --commit (commitSync of what each poll
 *     returned), --run-seconds N (at most, default 60), --until-records N (stop after N records),
 *     --until-active-tasks N (stop once N active tasks are reconciled), --stdin (stop on "stop" or end of
 *     input; "request-shutdown" asks the group to shut down, as KafkaStreams' SHUTDOWN_APPLICATION does).
 *     Events: {"event": "subscribed", "topics", "process_id"}, {"event": "assigned", "active", "standby",
 *     "warmup", "group_ready"} (tasks as [subtopology, partition] pairs), {"event": "revoked", "tasks"},
 *     {"event": "lost"}, {"event": "partitions", "assigned": [[topic, partition]...]} when the consumer's
 *     assignment changes, {"event": "status", "statuses": [{"code", "detail"}], "heartbeat_interval_ms"} when
 *     the group's statuses change, {"event": "endpoints", "endpoints": [{"host", "port", "active",
 *     "standby"}]} when the IQ endpoint map changes, {"event": "record", "topic", "partition", "offset", "key",
 *     "value"}, {"event": "committed", "offsets": [[topic, partition, offset]...]}, {"event": "error", "type",
 *     "message"} (then exit code 2 after closing), {"event": "closed"}.
 * describe BOOTSTRAP GROUP... [--include-authorized-operations]   describeStreamsGroups: a line per group
 * list BOOTSTRAP                          listGroups of type STREAMS: {"groups": [{"group_id", "type", "state"}]}
 * delete BOOTSTRAP GROUP...               deleteStreamsGroups: a line per group, {"group_id", "deleted"} or error
 * offsets BOOTSTRAP GROUP [TOPIC:PARTITION...]   listStreamsGroupOffsets: {"group_id", "offsets": [...]}
 * alter-offsets BOOTSTRAP GROUP TOPIC:PARTITION=OFFSET...   alterStreamsGroupOffsets: a line per partition
 * delete-offsets BOOTSTRAP GROUP TOPIC:PARTITION...         deleteStreamsGroupOffsets: a line per partition
 *
 * An admin call's failure is printed as {"error": {"type", "message"}} (the exception's cause: Kafka's
 * ApiException subclass) and the driver goes on; only an unexpected exception exits non-zero.
 */
public class StreamsDriver {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Duration POLL = Duration.ofMillis(100);
    static final long ADMIN_TIMEOUT_S = 60;

    public static void main(String[] args) throws Exception {
        String command = args[0];
        String bootstrap = args[1];
        List<String> rest = Arrays.asList(args).subList(2, args.length);
        switch (command) {
            case "member": System.exit(member(bootstrap, new Options(rest))); break;
            case "describe": describe(bootstrap, new Options(rest)); break;
            case "list": list(bootstrap); break;
            case "delete": delete(bootstrap, rest); break;
            case "offsets": offsets(bootstrap, rest.get(0), rest.subList(1, rest.size())); break;
            case "alter-offsets": alterOffsets(bootstrap, rest.get(0), rest.subList(1, rest.size())); break;
            case "delete-offsets": deleteOffsets(bootstrap, rest.get(0), rest.subList(1, rest.size())); break;
            default: throw new IllegalArgumentException("unknown command " + command);
        }
    }

    /** --name value pairs (repeatable) and bare --flags; whatever else, in order. */
    static class Options {
        final Map<String, List<String>> values = new HashMap<>();
        final List<String> positional = new ArrayList<>();
        static final Set<String> FLAGS = Set.of("--commit", "--stdin", "--include-authorized-operations");

        Options(List<String> args) {
            for (int i = 0; i < args.size(); i++) {
                String arg = args.get(i);
                if (FLAGS.contains(arg)) {
                    values.computeIfAbsent(arg, k -> new ArrayList<>()).add("true");
                } else if (arg.startsWith("--")) {
                    values.computeIfAbsent(arg, k -> new ArrayList<>()).add(args.get(++i));
                } else {
                    positional.add(arg);
                }
            }
        }

        String get(String name, String fallback) {
            List<String> all = values.get(name);
            return all == null ? fallback : all.get(all.size() - 1);
        }

        List<String> all(String name) {
            return values.getOrDefault(name, List.of());
        }

        boolean has(String name) {
            return values.containsKey(name);
        }
    }

    static void print(ObjectNode line) {
        System.out.println(line.toString());
        System.out.flush();
    }

    static ObjectNode event(String name) {
        ObjectNode line = JSON.createObjectNode();
        line.put("event", name);
        return line;
    }

    static ObjectNode error(Throwable e) {
        Throwable cause = (e instanceof ExecutionException && e.getCause() != null) ? e.getCause() : e;
        ObjectNode error = JSON.createObjectNode();
        error.put("type", cause.getClass().getSimpleName());
        error.put("message", cause.getMessage());
        return error;
    }

    // -- the member ------------------------------------------------------------------------------------------

    static Map<String, StreamsRebalanceData.Subtopology> subtopologies(JsonNode topology) {
        Map<String, StreamsRebalanceData.Subtopology> subtopologies = new HashMap<>();
        topology.path("subtopologies").properties().forEach(entry -> {
            JsonNode subtopology = entry.getValue();
            List<Set<String>> copartitionGroups = new ArrayList<>();
            subtopology.path("copartition_groups").forEach(group -> copartitionGroups.add(strings(group)));
            subtopologies.put(entry.getKey(), new StreamsRebalanceData.Subtopology(
                strings(subtopology.path("source_topics")), strings(subtopology.path("repartition_sink_topics")),
                topicInfos(subtopology.path("repartition_source_topics")),
                topicInfos(subtopology.path("state_changelog_topics")), copartitionGroups));
        });
        return subtopologies;
    }

    static Set<String> strings(JsonNode array) {
        Set<String> out = new LinkedHashSet<>();
        array.forEach(item -> out.add(item.asText()));
        return out;
    }

    static Map<String, StreamsRebalanceData.TopicInfo> topicInfos(JsonNode topics) {
        Map<String, StreamsRebalanceData.TopicInfo> out = new HashMap<>();
        topics.properties().forEach(entry -> {
            JsonNode info = entry.getValue();
            Map<String, String> configs = new HashMap<>();
            info.path("configs").properties().forEach(c -> configs.put(c.getKey(), c.getValue().asText()));
            out.put(entry.getKey(), new StreamsRebalanceData.TopicInfo(
                info.hasNonNull("partitions") ? Optional.of(info.get("partitions").asInt()) : Optional.empty(),
                info.hasNonNull("replication_factor")
                    ? Optional.of((short) info.get("replication_factor").asInt()) : Optional.empty(),
                configs));
        });
        return out;
    }

    static ArrayNode tasks(Collection<StreamsRebalanceData.TaskId> tasks) {
        ArrayNode out = JSON.createArrayNode();
        tasks.stream().sorted().forEach(task -> out.add(JSON.createArrayNode()
            .add(task.subtopologyId()).add(task.partitionId())));
        return out;
    }

    static ArrayNode partitions(Collection<TopicPartition> partitions) {
        ArrayNode out = JSON.createArrayNode();
        partitions.stream().sorted(Comparator.comparing(TopicPartition::topic).thenComparing(TopicPartition::partition))
            .forEach(tp -> out.add(JSON.createArrayNode().add(tp.topic()).add(tp.partition())));
        return out;
    }

    /** What DefaultStreamsRebalanceListener does for the consumer: it reports the assignment it now runs. */
    static class PrintingListener implements StreamsRebalanceListener {
        final StreamsRebalanceData data;

        PrintingListener(StreamsRebalanceData data) {
            this.data = data;
        }

        @Override
        public void onTasksRevoked(Set<StreamsRebalanceData.TaskId> tasks) {
            ObjectNode line = event("revoked");
            line.set("tasks", tasks(tasks));
            print(line);
        }

        @Override
        public void onTasksAssigned(StreamsRebalanceData.Assignment assignment) {
            ObjectNode line = event("assigned");
            line.set("active", tasks(assignment.activeTasks()));
            line.set("standby", tasks(assignment.standbyTasks()));
            line.set("warmup", tasks(assignment.warmupTasks()));
            line.put("group_ready", assignment.isGroupReady());
            print(line);
            data.setReconciledAssignment(assignment);
        }

        @Override
        public void onAllTasksLost() {
            print(event("lost"));
            data.setReconciledAssignment(StreamsRebalanceData.Assignment.EMPTY);
        }
    }

    static int member(String bootstrap, Options options) throws Exception {
        String group = options.get("--group", null);
        JsonNode topology = JSON.readTree(options.get("--topology-json", "{}"));
        UUID processId = UUID.fromString(options.get("--process-id", UUID.randomUUID().toString()));
        Optional<StreamsRebalanceData.HostInfo> endpoint = Optional.ofNullable(options.get("--endpoint", null))
            .map(text -> new StreamsRebalanceData.HostInfo(text.substring(0, text.lastIndexOf(':')),
                Integer.parseInt(text.substring(text.lastIndexOf(':') + 1))));
        Map<String, String> clientTags = new HashMap<>();
        for (String tag : options.all("--client-tag"))
            clientTags.put(tag.substring(0, tag.indexOf('=')), tag.substring(tag.indexOf('=') + 1));
        StreamsRebalanceData data = new StreamsRebalanceData(processId, endpoint,
            Optional.ofNullable(options.get("--rack", null)), subtopologies(topology), clientTags);

        // StreamsConfig's CONSUMER_DEFAULT_OVERRIDES: the consumer itself is configured for the classic
        // protocol; the StreamsRebalanceData alone makes it a streams group member.
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "1000");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        if (options.has("--client-id"))
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, options.get("--client-id", null));
        for (String property : options.all("--property"))
            props.put(property.substring(0, property.indexOf('=')), property.substring(property.indexOf('=') + 1));
        ByteArrayDeserializer keys = new ByteArrayDeserializer();
        ByteArrayDeserializer values = new ByteArrayDeserializer();
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        AtomicBoolean stop = new AtomicBoolean(false);
        AtomicBoolean shutdownRequested = new AtomicBoolean(false);
        if (options.has("--stdin")) {
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        if (line.trim().equals("stop")) break;
                        if (line.trim().equals("request-shutdown")) shutdownRequested.set(true);
                    }
                } catch (Exception e) {
                    // an unreadable stdin ends the member as its end does
                }
                stop.set(true);
            });
            reader.setDaemon(true);
            reader.start();
        }

        long deadline = System.currentTimeMillis() + 1000L * Long.parseLong(options.get("--run-seconds", "60"));
        long untilRecords = Long.parseLong(options.get("--until-records", "-1"));
        int untilActiveTasks = Integer.parseInt(options.get("--until-active-tasks", "-1"));
        int exitCode = 0;
        long consumed = 0;
        AsyncKafkaConsumer<byte[], byte[]> consumer = new AsyncKafkaConsumer<>(new ConsumerConfig(props), keys, values,
            Optional.of(data));
        try {
            // StreamThread.subscribeConsumer: the source topics and the repartition source topics
            Set<String> topics = new TreeSet<>();
            data.subtopologies().values().forEach(s -> {
                topics.addAll(s.sourceTopics());
                topics.addAll(s.repartitionSourceTopics().keySet());
            });
            consumer.subscribe(topics, new PrintingListener(data));
            ObjectNode subscribed = event("subscribed");
            subscribed.set("topics", JSON.valueToTree(topics));
            subscribed.put("process_id", processId.toString());
            print(subscribed);

            Set<TopicPartition> lastPartitions = Set.of();
            List<StreamsGroupHeartbeatResponseData.Status> lastStatuses = List.of();
            Map<StreamsRebalanceData.HostInfo, StreamsRebalanceData.EndpointPartitions> lastEndpoints = Map.of();
            boolean shutdownSent = false;
            while (!stop.get() && System.currentTimeMillis() < deadline) {
                if (shutdownRequested.get() && !shutdownSent) {
                    data.requestShutdown();
                    shutdownSent = true;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
                Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    ObjectNode line = event("record");
                    line.put("topic", record.topic());
                    line.put("partition", record.partition());
                    line.put("offset", record.offset());
                    line.put("key", record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8));
                    line.put("value", record.value() == null ? null
                        : new String(record.value(), StandardCharsets.UTF_8));
                    print(line);
                    next.put(new TopicPartition(record.topic(), record.partition()),
                        new OffsetAndMetadata(record.offset() + 1));
                    consumed++;
                }
                if (options.has("--commit") && !next.isEmpty()) {
                    consumer.commitSync(next);
                    ObjectNode line = event("committed");
                    ArrayNode offsets = line.putArray("offsets");
                    TreeMap<TopicPartition, OffsetAndMetadata> sorted = new TreeMap<>(
                        Comparator.comparing(TopicPartition::topic).thenComparing(TopicPartition::partition));
                    sorted.putAll(next);
                    sorted.forEach((tp, offset) -> offsets.add(JSON.createArrayNode()
                        .add(tp.topic()).add(tp.partition()).add(offset.offset())));
                    print(line);
                }
                Set<TopicPartition> assigned = consumer.assignment();
                if (!assigned.equals(lastPartitions)) {
                    lastPartitions = new HashSet<>(assigned);
                    ObjectNode line = event("partitions");
                    line.set("assigned", partitions(assigned));
                    print(line);
                }
                if (!data.statuses().equals(lastStatuses)) {
                    lastStatuses = new ArrayList<>(data.statuses());
                    ObjectNode line = event("status");
                    ArrayNode statuses = line.putArray("statuses");
                    lastStatuses.forEach(s -> statuses.addObject().put("code", s.statusCode())
                        .put("detail", s.statusDetail()));
                    line.put("heartbeat_interval_ms", data.heartbeatIntervalMs());
                    print(line);
                }
                if (!data.partitionsByHost().equals(lastEndpoints)) {
                    lastEndpoints = new HashMap<>(data.partitionsByHost());
                    ObjectNode line = event("endpoints");
                    ArrayNode endpoints = line.putArray("endpoints");
                    lastEndpoints.forEach((host, parts) -> {
                        ObjectNode entry = endpoints.addObject().put("host", host.host()).put("port", host.port());
                        entry.set("active", partitions(parts.activePartitions()));
                        entry.set("standby", partitions(parts.standbyPartitions()));
                    });
                    print(line);
                }
                if (untilRecords >= 0 && consumed >= untilRecords) break;
                if (untilActiveTasks >= 0 && data.reconciledAssignment().activeTasks().size() == untilActiveTasks)
                    break;
            }
        } catch (Exception e) {
            ObjectNode line = event("error");
            line.setAll(error(e));
            print(line);
            exitCode = 2;
        } finally {
            try {
                consumer.close(CloseOptions.timeout(Duration.ofSeconds(30)));
            } catch (Exception e) {
                ObjectNode line = event("error");
                line.setAll(error(e));
                line.put("while", "close");
                print(line);
                exitCode = 2;
            }
            print(event("closed"));
        }
        return exitCode;
    }

    // -- the admin -------------------------------------------------------------------------------------------

    static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(props);
    }

    static <T> T await(KafkaFuture<T> future) throws Exception {
        return future.get(ADMIN_TIMEOUT_S, TimeUnit.SECONDS);
    }

    static ObjectNode assignment(StreamsGroupMemberAssignment assignment) {
        ObjectNode out = JSON.createObjectNode();
        Map<String, List<StreamsGroupMemberAssignment.TaskIds>> kinds = new LinkedHashMap<>();
        kinds.put("active", assignment.activeTasks());
        kinds.put("standby", assignment.standbyTasks());
        kinds.put("warmup", assignment.warmupTasks());
        kinds.forEach((kind, taskIds) -> {
            ArrayNode array = out.putArray(kind);
            taskIds.forEach(t -> {
                ObjectNode entry = array.addObject().put("subtopology", t.subtopologyId());
                entry.set("partitions", JSON.valueToTree(t.partitions()));
            });
        });
        return out;
    }

    static ObjectNode topicInfos(Map<String, StreamsGroupSubtopologyDescription.TopicInfo> topics) {
        ObjectNode out = JSON.createObjectNode();
        new TreeMap<>(topics).forEach((name, info) -> {
            ObjectNode entry = out.putObject(name).put("partitions", info.partitions())
                .put("replication_factor", info.replicationFactor());
            entry.set("configs", JSON.valueToTree(new TreeMap<>(info.topicConfigs())));
        });
        return out;
    }

    static ArrayNode taskOffsets(List<StreamsGroupMemberDescription.TaskOffset> offsets) {
        ArrayNode out = JSON.createArrayNode();
        offsets.forEach(o -> out.add(JSON.createArrayNode().add(o.subtopologyId()).add(o.partition()).add(o.offset())));
        return out;
    }

    static ObjectNode describeGroup(StreamsGroupDescription description) {
        ObjectNode out = JSON.createObjectNode();
        out.put("group_id", description.groupId());
        out.put("state", description.groupState().toString());
        out.put("group_epoch", description.groupEpoch());
        out.put("target_assignment_epoch", description.targetAssignmentEpoch());
        out.put("topology_epoch", description.topologyEpoch());
        out.put("coordinator", description.coordinator() == null ? null : description.coordinator().id());
        ArrayNode subtopologies = out.putArray("subtopologies");
        description.subtopologies().forEach(s -> {
            ObjectNode entry = subtopologies.addObject().put("subtopology_id", s.subtopologyId());
            entry.set("source_topics", JSON.valueToTree(s.sourceTopics()));
            entry.set("repartition_sink_topics", JSON.valueToTree(s.repartitionSinkTopics()));
            entry.set("state_changelog_topics", topicInfos(s.stateChangelogTopics()));
            entry.set("repartition_source_topics", topicInfos(s.repartitionSourceTopics()));
        });
        ArrayNode members = out.putArray("members");
        description.members().forEach(m -> {
            ObjectNode entry = members.addObject().put("member_id", m.memberId()).put("member_epoch", m.memberEpoch())
                .put("instance_id", m.instanceId().orElse(null)).put("rack_id", m.rackId().orElse(null))
                .put("client_id", m.clientId()).put("client_host", m.clientHost())
                .put("topology_epoch", m.topologyEpoch()).put("process_id", m.processId())
                .put("is_classic", m.isClassic());
            entry.set("user_endpoint", m.userEndpoint().<JsonNode>map(e -> JSON.createObjectNode()
                .put("host", e.host()).put("port", e.port())).orElse(null));
            entry.set("client_tags", JSON.valueToTree(new TreeMap<>(m.clientTags())));
            entry.set("task_offsets", taskOffsets(m.taskOffsets()));
            entry.set("task_end_offsets", taskOffsets(m.taskEndOffsets()));
            entry.set("assignment", assignment(m.assignment()));
            entry.set("target_assignment", assignment(m.targetAssignment()));
        });
        Set<AclOperation> operations = description.authorizedOperations();
        out.set("authorized_operations", operations == null ? null
            : JSON.valueToTree(operations.stream().map(Enum::name).sorted().toList()));
        return out;
    }

    static void describe(String bootstrap, Options options) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            DescribeStreamsGroupsOptions describeOptions = new DescribeStreamsGroupsOptions()
                .includeAuthorizedOperations(options.has("--include-authorized-operations"));
            Map<String, KafkaFuture<StreamsGroupDescription>> described =
                admin.describeStreamsGroups(options.positional, describeOptions).describedGroups();
            for (String group : options.positional) {
                try {
                    print(describeGroup(await(described.get(group))));
                } catch (ExecutionException e) {
                    ObjectNode line = JSON.createObjectNode().put("group_id", group);
                    line.set("error", error(e));
                    print(line);
                }
            }
        }
    }

    static void list(String bootstrap) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            ObjectNode line = JSON.createObjectNode();
            try {
                Collection<GroupListing> groups = await(admin.listGroups(
                    new ListGroupsOptions().withTypes(Set.of(GroupType.STREAMS))).all());
                ArrayNode out = line.putArray("groups");
                groups.stream().sorted(Comparator.comparing(GroupListing::groupId)).forEach(g -> out.addObject()
                    .put("group_id", g.groupId()).put("type", g.type().map(Enum::toString).orElse(null))
                    .put("state", g.groupState().map(Enum::toString).orElse(null)).put("protocol", g.protocol()));
            } catch (ExecutionException e) {
                line.set("error", error(e));
            }
            print(line);
        }
    }

    static void delete(String bootstrap, List<String> groups) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            Map<String, KafkaFuture<Void>> deleted = admin.deleteStreamsGroups(groups).deletedGroups();
            for (String group : groups) {
                ObjectNode line = JSON.createObjectNode().put("group_id", group);
                try {
                    await(deleted.get(group));
                    line.put("deleted", true);
                } catch (ExecutionException e) {
                    line.set("error", error(e));
                }
                print(line);
            }
        }
    }

    static TopicPartition topicPartition(String text) {
        int colon = text.lastIndexOf(':');
        return new TopicPartition(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
    }

    static void offsets(String bootstrap, String group, List<String> partitions) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            ListStreamsGroupOffsetsSpec spec = new ListStreamsGroupOffsetsSpec();
            if (!partitions.isEmpty())
                spec.topicPartitions(partitions.stream().map(StreamsDriver::topicPartition).toList());
            ObjectNode line = JSON.createObjectNode().put("group_id", group);
            try {
                Map<TopicPartition, OffsetAndMetadata> offsets = await(
                    admin.listStreamsGroupOffsets(Map.of(group, spec)).partitionsToOffsetAndMetadata(group));
                ArrayNode out = line.putArray("offsets");
                offsets.entrySet().stream()
                    .sorted(Comparator.comparing((Map.Entry<TopicPartition, OffsetAndMetadata> e) -> e.getKey().topic())
                        .thenComparing(e -> e.getKey().partition()))
                    .forEach(e -> {
                        ObjectNode entry = out.addObject().put("topic", e.getKey().topic())
                            .put("partition", e.getKey().partition());
                        OffsetAndMetadata offset = e.getValue();
                        if (offset == null) {
                            entry.putNull("offset");
                        } else {
                            entry.put("offset", offset.offset()).put("metadata", offset.metadata());
                            entry.put("leader_epoch", offset.leaderEpoch().orElse(null));
                        }
                    });
            } catch (ExecutionException e) {
                line.set("error", error(e));
            }
            print(line);
        }
    }

    static void alterOffsets(String bootstrap, String group, List<String> changes) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        for (String change : changes) {
            int equals = change.lastIndexOf('=');
            offsets.put(topicPartition(change.substring(0, equals)),
                new OffsetAndMetadata(Long.parseLong(change.substring(equals + 1))));
        }
        try (Admin admin = admin(bootstrap)) {
            AlterStreamsGroupOffsetsResult result = admin.alterStreamsGroupOffsets(group, offsets);
            for (TopicPartition tp : offsets.keySet())
                printPartitionResult(group, tp, result.partitionResult(tp));
        }
    }

    static void deleteOffsets(String bootstrap, String group, List<String> partitions) throws Exception {
        Set<TopicPartition> tps = new LinkedHashSet<>();
        partitions.forEach(p -> tps.add(topicPartition(p)));
        try (Admin admin = admin(bootstrap)) {
            DeleteStreamsGroupOffsetsResult result = admin.deleteStreamsGroupOffsets(group, tps);
            for (TopicPartition tp : tps)
                printPartitionResult(group, tp, result.partitionResult(tp));
        }
    }

    static void printPartitionResult(String group, TopicPartition tp, KafkaFuture<Void> future) throws Exception {
        ObjectNode line = JSON.createObjectNode().put("group_id", group).put("topic", tp.topic())
            .put("partition", tp.partition());
        try {
            await(future);
            line.put("ok", true);
        } catch (ExecutionException e) {
            line.set("error", error(e));
        }
        print(line);
    }
}
