// A small driver of Apache Kafka's own Java client (kafka-clients 4.3.0), run by
// tests/interop/test_java_client.py against a real franz broker. Each command
// prints one result line that the test checks; any exception exits non-zero.
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.zip.CRC32;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.acl.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.*;
import org.apache.kafka.common.resource.*;
import org.apache.kafka.common.security.token.delegation.*;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.common.utils.SecurityUtils;

public class FranzDriver {
    static final Duration POLL = Duration.ofMillis(200);
    static final long DEADLINE_MS = 60_000;

    public static void main(String[] args) throws Exception {
        String command = args[0], bootstrap = args[1];
        switch (command) {
            case "produce": produce(bootstrap, args[2], Integer.parseInt(args[3]), args[4], args[5], Boolean.parseBoolean(args[6])); break;
            case "consume": consume(bootstrap, args[2], Integer.parseInt(args[3]), null, "read_uncommitted", "classic"); break;
            case "group-consume": consume(bootstrap, args[2], Integer.parseInt(args[3]), args[4], "read_uncommitted", "classic"); break;
            // the consumer group protocol of KIP-848 (ConsumerGroupHeartbeat)
            case "consumer-group-consume": consume(bootstrap, args[2], Integer.parseInt(args[3]), args[4], "read_uncommitted", "consumer"); break;
            case "committed-consume": consume(bootstrap, args[2], Integer.parseInt(args[3]), null, "read_committed", "classic"); break;
            case "admin": admin(bootstrap, args[2], Integer.parseInt(args[3])); break;
            case "describe-topics": describeTopics(bootstrap, args[2]); break;
            case "describe-group": describeGroup(bootstrap, args[2]); break;
            case "transactions": transactions(bootstrap, args[2]); break;
            case "exactly-once": exactlyOnce(bootstrap, args[2], args[3], Integer.parseInt(args[4]), args[5]); break;
            case "offsets-and-producers": offsetsAndProducers(bootstrap, args[2]); break;
            case "describe-transaction": describeTransaction(bootstrap, args[2]); break;
            case "abort-transaction": abortTransaction(bootstrap, args[2]); break;
            case "acls": acls(bootstrap); break;
            case "tokens": tokens(bootstrap); break;
            case "token-lifecycle": tokenLifecycle(bootstrap, args[2], args[3]); break;
            case "token-describe": tokenDescribe(bootstrap); break;
            case "token-expire-now": tokenExpireNow(bootstrap, args[2]); break;
            case "quotas": quotas(bootstrap); break;
            case "scram": scram(bootstrap); break;
            case "mutation-quota": mutationQuota(bootstrap); break;
            case "group-configs": groupConfigs(bootstrap, args[2]); break;
            case "config-resources": configResources(bootstrap, args[2]); break;
            case "client-metrics": clientMetrics(bootstrap, args[2]); break;
            case "unregister-broker": unregisterBroker(bootstrap, args[2]); break;
            case "pattern-consume": patternConsume(bootstrap, args[2], Integer.parseInt(args[3])); break;
            case "loggers": loggers(bootstrap, args[2]); break;
            case "elect-leaders": electLeaders(bootstrap, args[2]); break;
            case "features": features(bootstrap, Arrays.copyOfRange(args, 2, args.length)); break;
            case "move-replica": moveReplica(bootstrap, args[2], args[3], args[4]); break;
            case "reassignments": reassignments(bootstrap, args[2]); break;
            case "produce-keys": produceKeys(bootstrap, args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4])); break;
            case "read-compacted": readCompacted(bootstrap, args[2]); break;
            case "group-admin": groupAdmin(bootstrap, args[2]); break;
            case "paced": paced(bootstrap, args[2], Integer.parseInt(args[3]), Long.parseLong(args[4]), args[5]); break;
            case "rolling-migration": rollingMigration(bootstrap, args[2], Integer.parseInt(args[3])); break;
            default: throw new IllegalArgumentException("unknown command " + command);
        }
    }

    // Every client of a command authenticates when FRANZ_DRIVER_SASL is MECHANISM:user:password
    // (MECHANISM:tokenId:hmac:token with a delegation token), and takes the client settings of the
    // properties file FRANZ_DRIVER_PROPERTIES names (TLS's).
    static Properties props(String bootstrap) {
        Properties p = new Properties();
        String extra = System.getenv("FRANZ_DRIVER_PROPERTIES");
        if (extra != null) {
            try (java.io.FileReader reader = new java.io.FileReader(extra)) {
                p.load(reader);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        p.put("bootstrap.servers", bootstrap);
        String sasl = System.getenv("FRANZ_DRIVER_SASL");
        if (sasl != null) {
            String[] parts = sasl.split(":", 4);
            String module = parts[0].equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule";
            String tokenAuth = parts.length == 4 && parts[3].equals("token") ? " tokenauth=\"true\"" : "";
            p.putIfAbsent("security.protocol", "SASL_PLAINTEXT");
            p.put("sasl.mechanism", parts[0]);
            p.put("sasl.jaas.config",
                module + " required username=\"" + parts[1] + "\" password=\"" + parts[2] + "\"" + tokenAuth + ";");
        }
        return p;
    }

    static void produce(String bootstrap, String topic, int count, String acks, String compression, boolean idempotent) throws Exception {
        Properties p = props(bootstrap);
        p.put("acks", acks);
        p.put("compression.type", compression);
        p.put("enable.idempotence", Boolean.toString(idempotent));
        p.put("linger.ms", "5");
        CRC32 checksum = new CRC32();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String value = "value-" + i;
                checksum.update(value.getBytes(StandardCharsets.UTF_8));
                sent.add(producer.send(new ProducerRecord<>(topic, "key-" + (i % 7), value)));
            }
            producer.flush();
            for (Future<RecordMetadata> f : sent) f.get(30, TimeUnit.SECONDS);
        }
        System.out.println("produced " + count + " " + checksum.getValue());
    }

    // One record at a time, pause_ms apart, each acknowledged before the next, while a group
    // consumer reads them: both clients' connections live across the broker's session lifetime
    // (KIP-368 re-authentication).
    static void paced(String bootstrap, String topic, int count, long pauseMs, String group) throws Exception {
        Properties c = props(bootstrap);
        c.put("group.id", group);
        c.put("auto.offset.reset", "earliest");
        int seen = 0;
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(props(bootstrap), new StringSerializer(), new StringSerializer());
             KafkaConsumer<String, String> consumer =
                 new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "value-" + i)).get(30, TimeUnit.SECONDS);
                seen += consumer.poll(Duration.ofMillis(pauseMs)).count();
            }
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (seen < count && System.currentTimeMillis() < deadline) seen += consumer.poll(POLL).count();
        }
        System.out.println("paced " + count + " " + seen);
    }

    // Rounds of values for the same keys from one idempotent producer, each round flushed, then a
    // tombstone for key-0: what a compacted topic is for.
    static void produceKeys(String bootstrap, String topic, int rounds, int keys) throws Exception {
        Properties p = props(bootstrap);
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int round = 0; round < rounds; round++) {
                for (int key = 0; key < keys; key++)
                    producer.send(new ProducerRecord<>(topic, 0, "key-" + key, "round-" + round));
                producer.flush();
            }
            producer.send(new ProducerRecord<>(topic, 0, "key-0", null)).get(30, TimeUnit.SECONDS);
        }
        System.out.println("produced " + (rounds * keys + 1));
    }

    // KIP-848 online migration with the Java client: a classic member, then a consumer-protocol
    // member joins (the group upgrades), the classic one commits and leaves; a classic member
    // joins again and the consumer one leaves (the group downgrades). One thread polls every
    // live consumer in turn; values seen are counted once each.
    static void rollingMigration(String bootstrap, String topic, int count) throws Exception {
        int partitions = 4;
        try (Admin admin = Admin.create(props(bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props(bootstrap), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) producer.send(new ProducerRecord<>(topic, i % partitions, null, "value-" + i));
            producer.flush();
        }
        String group = "rolling-" + topic;
        Set<String> seen = new HashSet<>();
        StringBuilder out = new StringBuilder("migration");
        KafkaConsumer<String, String> classic = member(bootstrap, group, "classic", topic);
        KafkaConsumer<String, String> modern = null, back = null;
        try (Admin admin = Admin.create(props(bootstrap))) {
            pollUntilSplit(List.of(classic), partitions, seen);
            out.append(" start=").append(admin.describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group).type());
            modern = member(bootstrap, group, "consumer", topic);
            pollUntilSplit(List.of(classic, modern), partitions, seen);
            ConsumerGroupDescription upgraded = admin.describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group);
            List<String> kinds = new ArrayList<>();
            for (MemberDescription m : upgraded.members()) kinds.add(m.upgraded().map(u -> u ? "consumer" : "classic").orElse("?"));
            Collections.sort(kinds);
            out.append(" upgraded=").append(upgraded.type()).append(kinds);
            drain(List.of(classic, modern), seen);
            classic.commitSync();  // a classic member's commit, at its generation, into a consumer group
            classic.close();
            classic = null;
            out.append(" classic-committed=").append(committed(admin, group));
            pollUntilSplit(List.of(modern), partitions, seen);
            back = member(bootstrap, group, "classic", topic);
            pollUntilSplit(List.of(modern, back), partitions, seen);
            modern.close();
            modern = null;
            pollUntilSplit(List.of(back), partitions, seen);
            drain(List.of(back), seen);
            back.commitSync();
            ConsumerGroupDescription downgraded = admin.describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group);
            out.append(" downgraded=").append(downgraded.type()).append(" members=").append(downgraded.members().size());
            back.close();
            back = null;
            out.append(" seen=").append(seen.size()).append(" committed=").append(committed(admin, group));
        } finally {
            for (KafkaConsumer<String, String> c : Arrays.asList(classic, modern, back)) if (c != null) c.close();
        }
        System.out.println(out);
    }

    static KafkaConsumer<String, String> member(String bootstrap, String group, String protocol, String topic) {
        Properties p = props(bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", protocol);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        if (protocol.equals("classic")) {
            p.put("session.timeout.ms", "6000");
            p.put("heartbeat.interval.ms", "300");
        }
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    static long committed(Admin admin, String group) throws Exception {
        long sum = 0;
        for (OffsetAndMetadata o : admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).values())
            sum += o.offset();
        return sum;
    }

    // Poll the consumers in turn until each has read every partition it owns to its end offset.
    static void drain(List<KafkaConsumer<String, String>> consumers, Set<String> seen) {
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        for (KafkaConsumer<String, String> c : consumers) {
            Map<TopicPartition, Long> ends = c.endOffsets(c.assignment());
            while (ends.entrySet().stream().anyMatch(e -> c.position(e.getKey()) < e.getValue())) {
                for (KafkaConsumer<String, String> any : consumers)
                    for (ConsumerRecord<String, String> r : any.poll(Duration.ofMillis(50))) seen.add(r.value());
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("not drained: " + c.assignment());
            }
        }
    }

    // Poll the consumers in turn until each owns a partition and together they own every one, once.
    static void pollUntilSplit(List<KafkaConsumer<String, String>> consumers, int partitions, Set<String> seen) {
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        while (true) {
            Set<TopicPartition> owned = new HashSet<>();
            int total = 0;
            boolean each = true;
            for (KafkaConsumer<String, String> c : consumers) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(50))) seen.add(r.value());
                owned.addAll(c.assignment());
                total += c.assignment().size();
                each &= !c.assignment().isEmpty();
            }
            if (each && total == partitions && owned.size() == partitions) return;
            if (System.currentTimeMillis() > deadline)
                throw new IllegalStateException("no split of " + partitions + " partitions: " + owned + " total " + total);
        }
    }

    // Every record of partition 0 from the beginning to the end offset: "offset key value" per record.
    static void readCompacted(String bootstrap, String topic) throws Exception {
        Properties p = props(bootstrap);
        p.put("enable.auto.commit", "false");
        TopicPartition tp = new TopicPartition(topic, 0);
        StringBuilder out = new StringBuilder();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (consumer.position(tp) < end && System.currentTimeMillis() < deadline)
                for (ConsumerRecord<String, String> r : consumer.poll(POLL))
                    out.append(r.offset()).append(' ').append(r.key()).append(' ').append(r.value()).append('\n');
            out.append("position ").append(consumer.position(tp)).append(" end ").append(end);
        }
        System.out.println(out);
    }

    static void consume(String bootstrap, String topic, int count, String group, String isolation, String groupProtocol) throws Exception {
        Properties p = props(bootstrap);
        p.put("isolation.level", isolation);
        p.put("auto.offset.reset", "earliest");
        if (group != null) {
            p.put("group.id", group);
            p.put("enable.auto.commit", "false");
            p.put("group.protocol", groupProtocol);
        }
        long sum = 0;
        long minOffset = Long.MAX_VALUE;
        int seen = 0;
        // Order-independent checksum: the sum of each value's CRC.
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            if (group != null) {
                consumer.subscribe(List.of(topic));
            } else {
                List<TopicPartition> parts = new ArrayList<>();
                for (PartitionInfo info : consumer.partitionsFor(topic)) parts.add(new TopicPartition(topic, info.partition()));
                consumer.assign(parts);
                consumer.seekToBeginning(parts);
            }
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (seen < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(POLL)) {
                    CRC32 crc = new CRC32();
                    crc.update(r.value().getBytes(StandardCharsets.UTF_8));
                    sum += crc.getValue();
                    minOffset = Math.min(minOffset, r.offset());
                    seen++;
                }
            }
            if (group != null) consumer.commitSync();
        }
        System.out.println("consumed " + seen + " " + sum + " " + minOffset);
    }

    // Admin's view of a group: ConsumerGroupDescribe for consumer-protocol groups, then its offsets.
    static void describeGroup(String bootstrap, String group) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group);
            long committed = 0;
            for (OffsetAndMetadata o : admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).values())
                committed += o.offset();
            System.out.println("group type=" + d.type() + " state=" + d.groupState() + " members=" + d.members().size()
                + " committed=" + committed);
        }
    }

    static void admin(String bootstrap, String topic, int partitions) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(Map.of("retention.ms", "3600000")))).all().get(30, TimeUnit.SECONDS);
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config config = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
            String retention = config.get("retention.ms").value();
            Collection<Node> nodes = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS);
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions + 1))).all().get(30, TimeUnit.SECONDS);
            int grown = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions().size();
            admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
            boolean gone = !admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(topic);
            System.out.println("admin partitions=" + d.partitions().size() + " topicId=" + !d.topicId().equals(Uuid.ZERO_UUID)
                + " retention=" + retention + " nodes=" + nodes.size() + " grown=" + grown + " deleted=" + gone);
        }
    }

    // kafka-topics.sh --describe, one partition a page (DescribeTopicPartitions' cursor), with the
    // authorized operations of the topic and of the cluster.
    static void describeTopics(String bootstrap, String topic) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            TopicDescription d = admin.describeTopics(List.of(topic), new DescribeTopicsOptions()
                .includeAuthorizedOperations(true).partitionSizeLimitPerResponse(1))
                .allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
            Set<AclOperation> cluster = admin.describeCluster(new DescribeClusterOptions()
                .includeAuthorizedOperations(true)).authorizedOperations().get(30, TimeUnit.SECONDS);
            System.out.println("described partitions=" + d.partitions().size() + " leaders="
                + d.partitions().stream().map(p -> p.leader().id()).distinct().toList()
                + " topicOps=" + new TreeSet<>(d.authorizedOperations()).toString().replace(" ", "")
                + " clusterOps=" + cluster.size());
        }
    }

    // Admin.listOffsets of every OffsetSpec on partition 0, then Admin.describeProducers of it.
    static void offsetsAndProducers(String bootstrap, String topic) throws Exception {
        TopicPartition partition = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(props(bootstrap))) {
            StringBuilder line = new StringBuilder("offsets");
            Map<String, OffsetSpec> specs = new LinkedHashMap<>();
            specs.put("earliest", OffsetSpec.earliest());
            specs.put("latest", OffsetSpec.latest());
            specs.put("maxTimestamp", OffsetSpec.maxTimestamp());
            specs.put("earliestLocal", OffsetSpec.earliestLocal());
            specs.put("latestTiered", OffsetSpec.latestTiered());
            for (Map.Entry<String, OffsetSpec> spec : specs.entrySet()) {
                long offset = admin.listOffsets(Map.of(partition, spec.getValue())).partitionResult(partition)
                    .get(30, TimeUnit.SECONDS).offset();
                line.append(' ').append(spec.getKey()).append('=').append(offset);
            }
            List<ProducerState> producers = admin.describeProducers(List.of(partition)).partitionResult(partition)
                .get(30, TimeUnit.SECONDS).activeProducers();
            line.append(" producers=").append(producers.size());
            for (ProducerState producer : producers) {
                line.append(" epoch=").append(producer.producerEpoch())
                    .append(" lastSequence=").append(producer.lastSequence())
                    .append(" txnStart=").append(producer.currentTransactionStartOffset().isPresent());
            }
            System.out.println(line);
        }
    }

    // kafka-consumer-groups.sh's operations on a classic group, then kafka-delete-records.sh,
    // kafka-log-dirs.sh and Admin.fenceProducers. A closed static member stays in its group, so it is
    // removed by instance id (LeaveGroup v3+); the empty group's offsets are then set (OffsetCommit
    // without a member) and one partition's deleted (OffsetDelete) before the group itself
    // (DeleteGroups). A fenced producer's open transaction is aborted and its commit refused.
    static void groupAdmin(String bootstrap, String topic) throws Exception {
        String group = "java-admin-group";
        TopicPartition first = new TopicPartition(topic, 0), second = new TopicPartition(topic, 1);
        StringBuilder line = new StringBuilder("group-admin");
        try (Admin admin = Admin.create(props(bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props(bootstrap), new StringSerializer(),
                    new StringSerializer())) {
                for (int i = 0; i < 100; i++) producer.send(new ProducerRecord<>(topic, i % 2, null, "value-" + i));
                producer.flush();
            }
            Properties c = props(bootstrap);
            c.put("group.id", group);
            c.put("group.instance.id", "static-1");
            c.put("auto.offset.reset", "earliest");
            c.put("enable.auto.commit", "false");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                    new StringDeserializer())) {
                consumer.subscribe(List.of(topic));
                int seen = 0;
                long deadline = System.currentTimeMillis() + DEADLINE_MS;
                while (seen < 100 && System.currentTimeMillis() < deadline) seen += consumer.poll(POLL).count();
                consumer.commitSync();
                line.append(" consumed=").append(seen);
            }
            line.append(" before=").append(classicGroup(admin, group));
            admin.removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions(
                List.of(new MemberToRemove("static-1")))).all().get(30, TimeUnit.SECONDS);
            line.append(" after=").append(classicGroup(admin, group));
            admin.alterConsumerGroupOffsets(group, Map.of(first, new OffsetAndMetadata(10, "reset"),
                second, new OffsetAndMetadata(20))).all().get(30, TimeUnit.SECONDS);
            admin.deleteConsumerGroupOffsets(group, Set.of(second)).all().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            OffsetAndMetadata reset = offsets.get(first);
            line.append(" offsets=").append(reset.offset()).append('/').append(reset.metadata())
                .append(" second=").append(offsets.containsKey(second) ? offsets.get(second).offset() : "none");
            admin.deleteConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS);
            boolean listed = admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get(30, TimeUnit.SECONDS)
                .stream().anyMatch(listing -> listing.groupId().equals(group));
            line.append(" listed=").append(listed);

            long low = admin.deleteRecords(Map.of(first, RecordsToDelete.beforeOffset(30))).lowWatermarks().get(first)
                .get(30, TimeUnit.SECONDS).lowWatermark();
            long earliest = admin.listOffsets(Map.of(first, OffsetSpec.earliest())).partitionResult(first)
                .get(30, TimeUnit.SECONDS).offset();
            line.append(" lowWatermark=").append(low).append(" earliest=").append(earliest);

            int node = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next().id();
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(node)).descriptions().get(node)
                .get(30, TimeUnit.SECONDS);
            for (LogDirDescription dir : dirs.values()) {
                for (TopicPartition partition : List.of(first, second)) {
                    ReplicaInfo replica = dir.replicaInfos().get(partition);
                    if (replica == null) continue;
                    line.append(" size").append(partition.partition()).append('=').append(replica.size());
                }
            }

            Properties t = props(bootstrap);
            t.put("transactional.id", "java-fenced");
            try (KafkaProducer<String, String> zombie = new KafkaProducer<>(t, new StringSerializer(),
                    new StringSerializer())) {
                zombie.initTransactions();
                zombie.beginTransaction();
                zombie.send(new ProducerRecord<>(topic, 1, null, "zombie")).get(30, TimeUnit.SECONDS);
                admin.fenceProducers(List.of("java-fenced")).all().get(30, TimeUnit.SECONDS);
                String commit;
                try {
                    zombie.commitTransaction();
                    commit = "committed";
                } catch (KafkaException e) {
                    commit = e.getClass().getSimpleName();
                }
                // fenceProducers returns once its InitProducerId succeeded: after the open transaction's
                // abort completed (CONCURRENT_TRANSACTIONS until then), which leaves the id Empty.
                TransactionState state = admin.describeTransactions(List.of("java-fenced")).description("java-fenced")
                    .get(30, TimeUnit.SECONDS).state();
                line.append(" fencedCommit=").append(commit).append(" fencedState=").append(state);
            }
        }
        System.out.println(line);
    }

    static String classicGroup(Admin admin, String group) throws Exception {
        ClassicGroupDescription description = admin.describeClassicGroups(List.of(group)).describedGroups().get(group)
            .get(30, TimeUnit.SECONDS);
        return description.state() + "/" + description.members().size();
    }

    // Admin.listTransactions (ListTransactions) and Admin.describeTransactions (FindCoordinator,
    // then DescribeTransactions) of one transactional id.
    static void describeTransaction(String bootstrap, String transactionalId) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            String listed = "none";
            for (TransactionListing listing : admin.listTransactions().all().get(30, TimeUnit.SECONDS)) {
                if (listing.transactionalId().equals(transactionalId)) listed = listing.state().toString();
            }
            TransactionDescription description = admin.describeTransactions(List.of(transactionalId))
                .description(transactionalId).get(30, TimeUnit.SECONDS);
            System.out.println("transaction listed=" + listed + " described=" + description.state()
                + " timeout=" + description.transactionTimeoutMs() + " partitions=" + description.topicPartitions().size());
        }
    }

    // kafka-transactions.sh abort: a transaction left open by a live producer is ended at the
    // partition (WriteTxnMarkers) with the producer id, epoch and coordinator epoch that
    // describeProducers reports; the partition then has no open transaction.
    static void abortTransaction(String bootstrap, String topic) throws Exception {
        TopicPartition partition = new TopicPartition(topic, 0);
        Properties p = props(bootstrap);
        p.put("transactional.id", "java-hanging");
        KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        try (Admin admin = Admin.create(props(bootstrap))) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "left open")).get(30, TimeUnit.SECONDS);
            ProducerState open = openTransaction(admin, partition);
            admin.abortTransaction(new AbortTransactionSpec(partition, open.producerId(), (short) open.producerEpoch(),
                open.coordinatorEpoch().orElse(-1))).all().get(30, TimeUnit.SECONDS);
            ProducerState after = openTransaction(admin, partition);
            System.out.println("abort open=" + open.currentTransactionStartOffset().getAsLong()
                + " after=" + (after == null ? "none" : after.currentTransactionStartOffset().getAsLong()));
        } finally {
            producer.close(Duration.ZERO);
        }
    }

    static ProducerState openTransaction(Admin admin, TopicPartition partition) throws Exception {
        for (ProducerState state : admin.describeProducers(List.of(partition)).partitionResult(partition)
                .get(30, TimeUnit.SECONDS).activeProducers()) {
            if (state.currentTransactionStartOffset().isPresent()) return state;
        }
        return null;
    }

    // kafka-configs.sh --entity-type users/clients/ips: set a user's byte rates, read every quota
    // back, then set an IP's connection rate, read it back and remove it.
    static void quotas(String bootstrap) throws Exception {
        ClientQuotaEntity alice = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "alice"));
        try (Admin admin = Admin.create(props(bootstrap))) {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(alice, List.of(
                new ClientQuotaAlteration.Op("producer_byte_rate", 1024.0),
                new ClientQuotaAlteration.Op("consumer_byte_rate", 2048.0))))).all().get(30, TimeUnit.SECONDS);
            Map<ClientQuotaEntity, Map<String, Double>> described =
                admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get(30, TimeUnit.SECONDS);
            System.out.print("quotas alice=" + new TreeMap<>(described.get(alice)) + " ");
            ClientQuotaEntity localhost = new ClientQuotaEntity(Map.of(ClientQuotaEntity.IP, "127.0.0.1"));
            printOutcomes("ip", List.of(admin.alterClientQuotas(List.of(new ClientQuotaAlteration(localhost,
                List.of(new ClientQuotaAlteration.Op("connection_creation_rate", 500.0))))).all()));
            described = admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get(30, TimeUnit.SECONDS);
            System.out.print("localhost=" + described.get(localhost) + " ");
            printOutcomes("removed", List.of(admin.alterClientQuotas(List.of(new ClientQuotaAlteration(localhost,
                List.of(new ClientQuotaAlteration.Op("connection_creation_rate", null))))).all()));
        }
    }

    // A controller_mutation_rate of 1 partition a second (a burst of 11): 10 and then 3 partitions
    // are created, the next topic is refused (the admin asked not to retry on a quota violation).
    static void mutationQuota(String bootstrap) throws Exception {
        Properties p = props(bootstrap);
        p.put("client.id", "java-mutations");
        try (Admin admin = Admin.create(p)) {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(
                new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "java-mutations")),
                List.of(new ClientQuotaAlteration.Op("controller_mutation_rate", 1.0))))).all().get(30, TimeUnit.SECONDS);
            CreateTopicsOptions noRetry = new CreateTopicsOptions().retryOnQuotaViolation(false);
            printOutcomes("mutations", List.of(
                admin.createTopics(List.of(new NewTopic("java-m1", 10, (short) 1)), noRetry).all(),
                admin.createTopics(List.of(new NewTopic("java-m2", 3, (short) 1)), noRetry).all(),
                admin.createTopics(List.of(new NewTopic("java-m3", 1, (short) 1)), noRetry).all()));
        }
    }

    // kafka-configs.sh --alter --add-config 'SCRAM-SHA-256=[iterations=8192,password=...]' --entity-type users,
    // then its --describe, which asks for the user's SCRAM credentials and client quotas together.
    static void scram(String bootstrap) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("carol",
                new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), "s3cret"))).all().get(30, TimeUnit.SECONDS);
            UserScramCredentialsDescription carol = admin.describeUserScramCredentials(List.of("carol"))
                .description("carol").get(30, TimeUnit.SECONDS);
            Map<ClientQuotaEntity, Map<String, Double>> quotas = admin.describeClientQuotas(ClientQuotaFilter.containsOnly(
                List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "carol")))).entities().get(30, TimeUnit.SECONDS);
            ScramCredentialInfo info = carol.credentialInfos().get(0);
            System.out.println("scram " + info.mechanism() + ":" + info.iterations() + " quotas=" + quotas.size());
        }
    }

    // kafka-configs.sh --entity-type groups: set a consumer group's session timeout, read it back
    // with the heartbeat interval it inherits from the broker.
    static void groupConfigs(String bootstrap, String group) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        try (Admin admin = Admin.create(props(bootstrap))) {
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                new ConfigEntry("consumer.session.timeout.ms", "50000"), AlterConfigOp.OpType.SET))))
                .all().get(30, TimeUnit.SECONDS);
            Config config = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
            ConfigEntry session = config.get("consumer.session.timeout.ms");
            ConfigEntry heartbeat = config.get("consumer.heartbeat.interval.ms");
            System.out.println("group session=" + session.value() + ":" + session.source() + " heartbeat="
                + heartbeat.value() + ":" + heartbeat.source());
        }
    }

    // Admin.listConfigResources (KIP-1142): every resource that has configs, then only topics,
    // then the deprecated listClientMetricsResources (the same API at v0).
    @SuppressWarnings("deprecation")
    static void configResources(String bootstrap, String group) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "50000"), AlterConfigOp.OpType.SET))))
                .all().get(30, TimeUnit.SECONDS);
            List<String> all = new ArrayList<>();
            for (ConfigResource resource : admin.listConfigResources().all().get(30, TimeUnit.SECONDS)) {
                all.add(resource.type() + ":" + resource.name());
            }
            Collections.sort(all);
            List<String> topics = new ArrayList<>();
            for (ConfigResource resource : admin.listConfigResources(Set.of(ConfigResource.Type.TOPIC),
                    new ListConfigResourcesOptions()).all().get(30, TimeUnit.SECONDS)) {
                topics.add(resource.type() + ":" + resource.name());
            }
            Collections.sort(topics);
            int clientMetrics = admin.listClientMetricsResources().all().get(30, TimeUnit.SECONDS).size();
            System.out.println("resources all=" + String.join(",", all) + " topics=" + String.join(",", topics)
                + " client-metrics=" + clientMetrics);
        }
    }

    // What kafka-client-metrics.sh does (KIP-714): set a subscription, describe and list it,
    // refuse an APPEND and a bad interval, delete it.
    static void clientMetrics(String bootstrap, String name) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, name);
        StringBuilder out = new StringBuilder("client-metrics");
        try (Admin admin = Admin.create(props(bootstrap))) {
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                new AlterConfigOp(new ConfigEntry("metrics", "org.apache.kafka.producer."), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("interval.ms", "60000"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("match", "client_software_name=kafka.python,client_id=app-.*"),
                    AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
            try {  // no client metrics key is a list to the controller's config schema
                admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                    new ConfigEntry("metrics", "org.apache.kafka.consumer."), AlterConfigOp.OpType.APPEND))))
                    .all().get(30, TimeUnit.SECONDS);
                out.append(" append=accepted");
            } catch (ExecutionException e) {
                out.append(" append=").append(e.getCause().getClass().getSimpleName());
            }
            Config config = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
            for (String key : List.of("metrics", "interval.ms", "match"))
                out.append(" ").append(key).append("=").append(config.get(key).value())
                   .append("(").append(config.get(key).source()).append(")");
            List<String> listed = new ArrayList<>();
            for (ConfigResource r : admin.listConfigResources(Set.of(ConfigResource.Type.CLIENT_METRICS),
                    new ListConfigResourcesOptions()).all().get(30, TimeUnit.SECONDS)) listed.add(r.name());
            out.append(" listed=").append(listed);
            try {
                admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                    new ConfigEntry("interval.ms", "50"), AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
                out.append(" bad=accepted");
            } catch (ExecutionException e) {
                out.append(" bad=").append(e.getCause().getClass().getSimpleName());
            }
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                new AlterConfigOp(new ConfigEntry("metrics", null), AlterConfigOp.OpType.DELETE),
                new AlterConfigOp(new ConfigEntry("interval.ms", null), AlterConfigOp.OpType.DELETE),
                new AlterConfigOp(new ConfigEntry("match", null), AlterConfigOp.OpType.DELETE))))
                .all().get(30, TimeUnit.SECONDS);
            out.append(" after-delete=").append(admin.listConfigResources(Set.of(ConfigResource.Type.CLIENT_METRICS),
                new ListConfigResourcesOptions()).all().get(30, TimeUnit.SECONDS).size());
        }
        System.out.println(out);
    }

    // The ACL calls of Admin on a broker with no authorizer: each fails with the exception it names.
    static void acls(String bootstrap) throws Exception {
        ResourcePattern pattern = new ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL);
        AclBinding binding = new AclBinding(pattern,
            new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        try (Admin admin = Admin.create(props(bootstrap))) {
            printOutcomes("acls", List.of(admin.describeAcls(AclBindingFilter.ANY).values(),
                admin.createAcls(List.of(binding)).all(), admin.deleteAcls(List.of(AclBindingFilter.ANY)).all()));
        }
    }

    // The delegation token calls of Admin over PLAINTEXT: create, renew, expire, describe.
    static void tokens(String bootstrap) throws Exception {
        byte[] hmac = {1, 2, 3};
        try (Admin admin = Admin.create(props(bootstrap))) {
            printOutcomes("tokens", List.of(admin.createDelegationToken().delegationToken(),
                admin.renewDelegationToken(hmac).expiryTimestamp(), admin.expireDelegationToken(hmac).expiryTimestamp(),
                admin.describeDelegationToken().delegationTokens()));
        }
    }

    // A token Admin creates with one renewer, owned by `owner` (the caller with "-"): described, renewed
    // for an hour, then set to expire in two. Prints its id and HMAC (what a client authenticates
    // with), owner, requester and renewers, whether describing lists it as created, its times, and
    // the expiry each later call answered or described.
    static void tokenLifecycle(String bootstrap, String renewer, String owner) throws Exception {
        CreateDelegationTokenOptions options = new CreateDelegationTokenOptions()
            .renewers(List.of(SecurityUtils.parseKafkaPrincipal(renewer)));
        if (!owner.equals("-")) options.owner(SecurityUtils.parseKafkaPrincipal(owner));
        try (Admin admin = Admin.create(props(bootstrap))) {
            DelegationToken token = admin.createDelegationToken(options).delegationToken().get(30, TimeUnit.SECONDS);
            TokenInformation info = token.tokenInfo();
            boolean described = admin.describeDelegationToken().delegationTokens().get(30, TimeUnit.SECONDS)
                .contains(token);
            long renewed = admin.renewDelegationToken(token.hmac(), new RenewDelegationTokenOptions()
                .renewTimePeriodMs(3_600_000)).expiryTimestamp().get(30, TimeUnit.SECONDS);
            long expiring = admin.expireDelegationToken(token.hmac(), new ExpireDelegationTokenOptions()
                .expiryTimePeriodMs(7_200_000)).expiryTimestamp().get(30, TimeUnit.SECONDS);
            long describedExpiry = -1;
            for (DelegationToken t : admin.describeDelegationToken().delegationTokens().get(30, TimeUnit.SECONDS)) {
                if (t.tokenInfo().tokenId().equals(info.tokenId())) describedExpiry = t.tokenInfo().expiryTimestamp();
            }
            System.out.println("token " + info.tokenId() + " " + token.hmacAsBase64String()
                + " owner=" + info.ownerAsString() + " requester=" + info.tokenRequesterAsString()
                + " renewers=" + String.join(",", info.renewersAsString())
                + " described=" + described + " issue=" + info.issueTimestamp() + " max=" + info.maxTimestamp()
                + " expiry=" + info.expiryTimestamp() + " renewed=" + renewed + " expiring=" + expiring
                + " described-expiry=" + describedExpiry);
        }
    }

    // Every token the caller may describe, as id:owner:expiry.
    static void tokenDescribe(String bootstrap) throws Exception {
        StringBuilder line = new StringBuilder("described");
        try (Admin admin = Admin.create(props(bootstrap))) {
            for (DelegationToken t : admin.describeDelegationToken().delegationTokens().get(30, TimeUnit.SECONDS)) {
                TokenInformation info = t.tokenInfo();
                line.append(' ').append(info.tokenId()).append(':').append(info.ownerAsString()).append(':')
                    .append(info.expiryTimestamp());
            }
        }
        System.out.println(line);
    }

    // kafka-delegation-tokens.sh --expire --expiry-time-period -1: the token (by its base64 HMAC) gone at once.
    static void tokenExpireNow(String bootstrap, String hmac) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            long expiry = admin.expireDelegationToken(Base64.getDecoder().decode(hmac),
                new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1)).expiryTimestamp().get(30, TimeUnit.SECONDS);
            System.out.println("expired " + expiry);
        }
    }

    // One line: `name`, then "ok" or the exception's class for each call, in order.
    static void printOutcomes(String name, List<KafkaFuture<?>> calls) throws Exception {
        StringBuilder line = new StringBuilder(name);
        for (KafkaFuture<?> call : calls) {
            try {
                call.get(30, TimeUnit.SECONDS);
                line.append(" ok");
            } catch (ExecutionException e) {
                line.append(' ').append(e.getCause().getClass().getSimpleName());
            }
        }
        System.out.println(line);
    }

    // kafka-configs.sh --entity-type broker-loggers: describe, set one logger's level, delete it,
    // then a level log4j does not have.
    static void loggers(String bootstrap, String logger) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.BROKER_LOGGER, "1");
        try (Admin admin = Admin.create(props(bootstrap))) {
            Config before = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
            StringBuilder line = new StringBuilder("loggers root=" + before.get("root").value()
                + " source=" + before.get(logger).source());
            for (AlterConfigOp op : List.of(
                    new AlterConfigOp(new ConfigEntry(logger, "TRACE"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry(logger, ""), AlterConfigOp.OpType.DELETE),
                    new AlterConfigOp(new ConfigEntry(logger, "LOUD"), AlterConfigOp.OpType.SET))) {
                try {
                    admin.incrementalAlterConfigs(Map.of(resource, List.of(op))).all().get(30, TimeUnit.SECONDS);
                    Config after = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
                    line.append(' ').append(op.opType()).append('=').append(after.get(logger).value());
                } catch (ExecutionException e) {
                    line.append(' ').append(op.opType()).append('=').append(e.getCause().getClass().getSimpleName());
                }
            }
            System.out.println(line);
        }
    }

    // A KIP-848 consumer subscribed by a SubscriptionPattern (SubscribedTopicRegex, resolved by the broker):
    // it reads the matching topic, then one made while it runs; a topic that does not match stays
    // unread. Prints how many records of each topic it saw.
    static void patternConsume(String bootstrap, String prefix, int count) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            admin.createTopics(List.of(new NewTopic(prefix + "-a", 2, (short) 1), new NewTopic("other-" + prefix, 1, (short) 1)))
                .all().get(30, TimeUnit.SECONDS);
        }
        Properties pp = props(bootstrap);
        Properties cp = props(bootstrap);
        cp.put("group.id", "pattern-" + prefix);
        cp.put("group.protocol", "consumer");
        cp.put("auto.offset.reset", "earliest");
        Map<String, Integer> seen = new TreeMap<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer());
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(prefix + "-a", "a-" + i));
                producer.send(new ProducerRecord<>("other-" + prefix, "o-" + i));
            }
            producer.flush();
            // SubscriptionPattern (RE2J syntax) is resolved by the broker; a java.util.regex Pattern
            // would be resolved by the client against its own metadata (refreshed every 5 minutes).
            consumer.subscribe(new SubscriptionPattern(prefix + "-.*"));
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (seen.getOrDefault(prefix + "-a", 0) < count && System.currentTimeMillis() < deadline)
                for (ConsumerRecord<String, String> r : consumer.poll(POLL)) seen.merge(r.topic(), 1, Integer::sum);
            try (Admin admin = Admin.create(props(bootstrap))) {
                admin.createTopics(List.of(new NewTopic(prefix + "-b", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            for (int i = 0; i < count; i++) producer.send(new ProducerRecord<>(prefix + "-b", "b-" + i));
            producer.flush();
            while (seen.getOrDefault(prefix + "-b", 0) < count && System.currentTimeMillis() < deadline)
                for (ConsumerRecord<String, String> r : consumer.poll(POLL)) seen.merge(r.topic(), 1, Integer::sum);
        }
        StringBuilder out = new StringBuilder("pattern");
        for (Map.Entry<String, Integer> e : seen.entrySet()) out.append(" ").append(e.getKey()).append("=").append(e.getValue());
        System.out.println(out);
    }

    // kafka-cluster.sh unregister: an id never registered, then this node's own; it still serves.
    static void unregisterBroker(String bootstrap, String topic) throws Exception {
        StringBuilder out = new StringBuilder("unregister");
        try (Admin admin = Admin.create(props(bootstrap))) {
            try {
                admin.unregisterBroker(99).all().get(30, TimeUnit.SECONDS);
                out.append(" other=ok");
            } catch (ExecutionException e) {
                out.append(" other=").append(e.getCause().getClass().getSimpleName());
            }
            int self = admin.describeCluster().controller().get(30, TimeUnit.SECONDS).id();
            admin.unregisterBroker(self).all().get(30, TimeUnit.SECONDS);
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            out.append(" self=ok nodes=").append(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size());
        }
        System.out.println(out);
    }

    // kafka-reassign-partitions.sh --reassignment-json-file with "log_dirs": a replica moved to
    // another log dir of its broker (Admin.alterReplicaLogDirs), then describeReplicaLogDirs
    // until the move is done. A refused dir prints its exception instead.
    static void moveReplica(String bootstrap, String topic, String bogusDir, String dir) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            int node = admin.describeCluster().controller().get(30, TimeUnit.SECONDS).id();
            TopicPartitionReplica replica = new TopicPartitionReplica(topic, 0, node);
            try {
                admin.alterReplicaLogDirs(Map.of(replica, bogusDir)).all().get(30, TimeUnit.SECONDS);
                System.out.println("bogus ok");
            } catch (ExecutionException e) {
                System.out.println("bogus " + e.getCause().getClass().getSimpleName());
            }
            DescribeReplicaLogDirsResult.ReplicaLogDirInfo before =
                admin.describeReplicaLogDirs(List.of(replica)).all().get(30, TimeUnit.SECONDS).get(replica);
            System.out.println("before current=" + before.getCurrentReplicaLogDir() + " future=" + before.getFutureReplicaLogDir());
            admin.alterReplicaLogDirs(Map.of(replica, dir)).all().get(30, TimeUnit.SECONDS);
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            DescribeReplicaLogDirsResult.ReplicaLogDirInfo info;
            do {
                Thread.sleep(100);
                info = admin.describeReplicaLogDirs(List.of(replica)).all().get(30, TimeUnit.SECONDS).get(replica);
            } while (info.getFutureReplicaLogDir() != null && System.currentTimeMillis() < deadline);
            System.out.println("after current=" + info.getCurrentReplicaLogDir() + " future=" + info.getFutureReplicaLogDir()
                + " lag=" + info.getCurrentReplicaOffsetLag());
        }
    }

    // kafka-features.sh: describe, then each update ("name=level:upgrade|safe|unsafe[:validate]") on
    // its own, then describe again. Prints one line each; a refused update prints its exception.
    static void features(String bootstrap, String[] updates) throws Exception {
        try (Admin admin = Admin.create(props(bootstrap))) {
            System.out.println(describeFeatures(admin));
            for (String update : updates) {
                String[] parts = update.split("[=:]");
                FeatureUpdate.UpgradeType type = Map.of("upgrade", FeatureUpdate.UpgradeType.UPGRADE,
                    "safe", FeatureUpdate.UpgradeType.SAFE_DOWNGRADE, "unsafe", FeatureUpdate.UpgradeType.UNSAFE_DOWNGRADE)
                    .get(parts[2]);
                UpdateFeaturesOptions options = new UpdateFeaturesOptions().validateOnly(parts.length > 3);
                try {
                    admin.updateFeatures(Map.of(parts[0], new FeatureUpdate(Short.parseShort(parts[1]), type)), options)
                        .all().get(30, TimeUnit.SECONDS);
                    System.out.println("update " + update + " ok");
                } catch (ExecutionException e) {
                    System.out.println("update " + update + " " + e.getCause().getClass().getSimpleName() + ": "
                        + e.getCause().getMessage());
                }
            }
            System.out.println(describeFeatures(admin));
        }
    }

    static String describeFeatures(Admin admin) throws Exception {
        FeatureMetadata metadata = admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS);
        StringBuilder out = new StringBuilder("finalized");
        new TreeMap<>(metadata.finalizedFeatures()).forEach((name, range) ->
            out.append(' ').append(name).append('=').append(range.minVersionLevel()).append('-').append(range.maxVersionLevel()));
        out.append(" epoch=").append(metadata.finalizedFeaturesEpoch().orElse(-1L)).append(" supported");
        new TreeMap<>(metadata.supportedFeatures()).forEach((name, range) ->
            out.append(' ').append(name).append('=').append(range.minVersion()).append('-').append(range.maxVersion()));
        return out.toString();
    }

    // kafka-leader-election.sh: a preferred election of partition 0, then of every partition.
    static void electLeaders(String bootstrap, String topic) throws Exception {
        TopicPartition partition = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(props(bootstrap))) {
            Optional<Throwable> one = admin.electLeaders(ElectionType.PREFERRED, Set.of(partition)).partitions()
                .get(30, TimeUnit.SECONDS).get(partition);
            int all = admin.electLeaders(ElectionType.PREFERRED, null).partitions().get(30, TimeUnit.SECONDS).size();
            System.out.println("elected one=" + one.map(e -> e.getClass().getSimpleName()).orElse("done") + " all=" + all);
        }
    }

    // kafka-reassign-partitions.sh on one node: the listing, a move to this node (already there),
    // a move to a broker that does not exist, and a cancel with nothing in progress.
    static void reassignments(String bootstrap, String topic) throws Exception {
        TopicPartition partition = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(props(bootstrap))) {
            int listed = admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS).size();
            System.out.print("reassignments listed=" + listed + " ");
            List<Optional<NewPartitionReassignment>> targets = List.of(
                Optional.of(new NewPartitionReassignment(List.of(1))),
                Optional.of(new NewPartitionReassignment(List.of(1, 2))), Optional.empty());
            List<KafkaFuture<?>> calls = new ArrayList<>();
            for (Optional<NewPartitionReassignment> target : targets) {
                calls.add(admin.alterPartitionReassignments(Map.of(partition, target)).all());
            }
            printOutcomes("altered", calls);
        }
    }

    // Consume-transform-produce, one input record per transaction: each transaction sends the
    // record upper-cased to `out` and the consumer's offset with it (sendOffsetsToTransaction),
    // then commits; a last transaction sends junk and is aborted. Prints what a read_committed
    // reader of `out` sees, the group's committed offset, and the producer epoch and state the
    // coordinator reports: with transactions v2 every end bumps the epoch.
    static void exactlyOnce(String bootstrap, String in, String out, int count, String groupProtocol) throws Exception {
        try (KafkaProducer<String, String> plain = new KafkaProducer<>(props(bootstrap), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < count; i++) plain.send(new ProducerRecord<>(in, 0, null, "record-" + i)).get();
        }
        Properties pp = props(bootstrap);
        pp.put("transactional.id", "java-eos-" + groupProtocol);
        Properties cp = props(bootstrap);
        cp.put("group.id", "eos-group-" + groupProtocol);
        cp.put("group.protocol", groupProtocol);
        cp.put("enable.auto.commit", "false");
        cp.put("auto.offset.reset", "earliest");
        cp.put("isolation.level", "read_committed");
        cp.put("max.poll.records", "1");
        int transactions = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer());
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
            producer.initTransactions();
            consumer.subscribe(List.of(in));
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            int done = 0;
            while (done < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(POLL)) {
                    producer.beginTransaction();
                    producer.send(new ProducerRecord<>(out, 0, null, record.value().toUpperCase()));
                    producer.sendOffsetsToTransaction(
                        Map.of(new TopicPartition(in, record.partition()), new OffsetAndMetadata(record.offset() + 1)),
                        consumer.groupMetadata());
                    producer.commitTransaction();
                    transactions++;
                    done++;
                }
            }
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(out, 0, null, "junk")).get();
            producer.abortTransaction();
            transactions++;
        }
        Properties rp = props(bootstrap);
        rp.put("isolation.level", "read_committed");
        List<String> seen = new ArrayList<>();
        try (KafkaConsumer<String, String> reader = new KafkaConsumer<>(rp, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition tp = new TopicPartition(out, 0);
            reader.assign(List.of(tp));
            reader.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (seen.size() < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : reader.poll(POLL)) seen.add(r.value());
            }
            for (ConsumerRecord<String, String> r : reader.poll(Duration.ofMillis(500))) seen.add(r.value());
        }
        try (Admin admin = Admin.create(props(bootstrap))) {
            long committed = admin.listConsumerGroupOffsets("eos-group-" + groupProtocol).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS).get(new TopicPartition(in, 0)).offset();
            TransactionDescription description = admin.describeTransactions(List.of("java-eos-" + groupProtocol))
                .description("java-eos-" + groupProtocol).get(30, TimeUnit.SECONDS);
            System.out.println("eos transactions=" + transactions + " out=" + String.join(",", seen)
                + " committed=" + committed + " epoch=" + description.producerEpoch() + " state=" + description.state());
        }
    }

    static void transactions(String bootstrap, String topic) throws Exception {
        Properties p = props(bootstrap);
        p.put("transactional.id", "java-tx");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "committed"));
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, null, "aborted"));
            producer.flush();
            producer.abortTransaction();
        }
        System.out.println("transactions done");
    }
}
