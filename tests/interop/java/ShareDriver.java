import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.*;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.*;
import org.apache.kafka.common.serialization.*;

/**
 * KIP-932 share groups with Kafka's own Java client (KafkaShareConsumer, Admin) against franz.
 * Every mode prints whitespace-separated words the Python test reads.
 *
 * produce BOOTSTRAP TOPIC COUNT FROM         records "value-FROM" .. to partition 0
 * transactions BOOTSTRAP TOPIC               "committed-0..4" committed, "aborted-0..4" aborted, "committed-5..9" committed
 * earliest BOOTSTRAP GROUP [KEY=VALUE]       share.auto.offset.reset=earliest for the group (and one more config)
 * consume BOOTSTRAP TOPIC GROUP COUNT        implicit mode: records until COUNT, then commitSync;
 *                                            prints "rec PARTITION OFFSET VALUE DELIVERYCOUNT" each
 * release BOOTSTRAP TOPIC GROUP COUNT        explicit mode: release the first COUNT records, then
 *                                            accept them when they come back
 * reject BOOTSTRAP TOPIC GROUP COUNT         explicit mode: reject COUNT records, then poll 3 s more
 * drain BOOTSTRAP TOPIC GROUP IDLE_MS [PAUSE_MS]  records until none came for IDLE_MS, accepting each
 *                                            (100 a poll and PAUSE_MS on each batch when given: a slow worker)
 * release-all BOOTSTRAP TOPIC GROUP IDLE_MS  explicit mode: release every record, until none came for IDLE_MS
 * limited BOOTSTRAP TOPIC GROUP COUNT        share.acquire.mode=record_limit, max.poll.records=3: "poll N" per poll
 * hold BOOTSTRAP TOPIC GROUP COUNT           implicit mode: receive COUNT records, print "held",
 *                                            then sleep until killed (never acknowledges)
 * describe BOOTSTRAP GROUP                   listGroups(share), describeShareGroups
 * delete BOOTSTRAP GROUP                     deleteShareGroups
 * offsets BOOTSTRAP GROUP                    listShareGroupOffsets: "offset TOPIC-PARTITION START LAG"
 * reset BOOTSTRAP GROUP TOPIC OFFSET         alterShareGroupOffsets of partition 0
 * forget BOOTSTRAP GROUP TOPIC               deleteShareGroupOffsets
 * persister BOOTSTRAP GROUP TOPIC [init]     a persister on another broker: FindCoordinator of type SHARE for
 *                                            GROUP:TOPIC-ID:0, then the share-group state RPCs built and
 *                                            parsed by the client's own request classes. Without "init",
 *                                            only reads ("read", "batch", "summary"); with it, initializes
 *                                            partitions 0-1, reads as a leader at epoch 2, writes as it
 *                                            and as a stale leader, reads, and deletes
 */
public class ShareDriver {
    static final long DEADLINE_MS = 60_000;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[1];
        switch (args[0]) {
            case "produce": produce(bootstrap, args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4])); break;
            case "transactions": transactions(bootstrap, args[2]); break;
            case "earliest": earliest(bootstrap, args[2], args.length > 3 ? args[3] : null); break;
            case "consume": consume(bootstrap, args[2], args[3], Integer.parseInt(args[4])); break;
            case "release": release(bootstrap, args[2], args[3], Integer.parseInt(args[4])); break;
            case "reject": reject(bootstrap, args[2], args[3], Integer.parseInt(args[4])); break;
            case "drain": drain(bootstrap, args[2], args[3], Integer.parseInt(args[4]), AcknowledgeType.ACCEPT,
                                args.length > 5 ? Integer.parseInt(args[5]) : 0); break;
            case "release-all": drain(bootstrap, args[2], args[3], Integer.parseInt(args[4]), AcknowledgeType.RELEASE, 0); break;
            case "limited": limited(bootstrap, args[2], args[3], Integer.parseInt(args[4])); break;
            case "hold": hold(bootstrap, args[2], args[3], Integer.parseInt(args[4])); break;
            case "describe": describe(bootstrap, args[2]); break;
            case "delete": delete(bootstrap, args[2]); break;
            case "offsets": offsets(bootstrap, args[2]); break;
            case "reset": reset(bootstrap, args[2], args[3], Long.parseLong(args[4])); break;
            case "forget": forget(bootstrap, args[2], args[3]); break;
            case "persister": persister(bootstrap, args[2], args[3], args.length > 4 && args[4].equals("init")); break;
            default: throw new IllegalArgumentException(args[0]);
        }
    }

    static void produce(String bootstrap, String topic, int count, int from) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = from; i < from + count; i++) producer.send(new ProducerRecord<>(topic, 0, null, "value-" + i));
            producer.flush();
        }
        System.out.println("produced " + count);
    }

    static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        return Admin.create(p);
    }

    static void transactions(String bootstrap, String topic) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", "share-txn");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            String[][] runs = {{"committed-", "0"}, {"aborted-", "0"}, {"committed-", "5"}};
            for (String[] run : runs) {
                producer.beginTransaction();
                int from = Integer.parseInt(run[1]);
                for (int i = from; i < from + 5; i++) producer.send(new ProducerRecord<>(topic, 0, null, run[0] + i));
                producer.flush();
                if (run[0].startsWith("aborted")) producer.abortTransaction(); else producer.commitTransaction();
            }
        }
        System.out.println("transactions");
    }

    static void earliest(String bootstrap, String group, String extra) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            List<AlterConfigOp> ops = new ArrayList<>();
            ops.add(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET));
            if (extra != null) {
                String[] kv = extra.split("=", 2);
                ops.add(new AlterConfigOp(new ConfigEntry(kv[0], kv[1]), AlterConfigOp.OpType.SET));
            }
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
        }
        System.out.println("earliest");
    }

    static KafkaShareConsumer<String, String> consumer(String bootstrap, String group, String mode) {
        return consumer(bootstrap, group, mode, new Properties());
    }

    static KafkaShareConsumer<String, String> consumer(String bootstrap, String group, String mode, Properties p) {
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", mode);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(p);
    }

    static void print(ConsumerRecord<String, String> r) {
        System.out.println("rec " + r.partition() + " " + r.offset() + " " + r.value() + " " + r.deliveryCount().orElse((short) -1));
    }

    static void consume(String bootstrap, String topic, String group, int count) {
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, group, "implicit")) {
            c.subscribe(List.of(topic));
            int got = 0;
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (got < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    print(r);
                    got++;
                }
            }
            Map<TopicIdPartition, Optional<KafkaException>> results = c.commitSync();
            for (Optional<KafkaException> error : results.values())
                if (error.isPresent()) throw error.get();
            System.out.println("consumed " + got);
        }
    }

    static void release(String bootstrap, String topic, String group, int count) {
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, group, "explicit")) {
            c.subscribe(List.of(topic));
            Set<Long> released = new HashSet<>();
            int accepted = 0;
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (accepted < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    print(r);
                    if (released.add(r.offset())) {
                        c.acknowledge(r, AcknowledgeType.RELEASE);
                    } else {
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        accepted++;
                    }
                }
                c.commitSync();
            }
            System.out.println("accepted " + accepted);
        }
    }

    static void reject(String bootstrap, String topic, String group, int count) {
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, group, "explicit")) {
            c.subscribe(List.of(topic));
            int rejected = 0, seen = 0;
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (rejected < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    print(r);
                    c.acknowledge(r, AcknowledgeType.REJECT);
                    rejected++;
                }
                c.commitSync();
            }
            long quiet = System.currentTimeMillis() + 3000;
            while (System.currentTimeMillis() < quiet) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    print(r);
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                    seen++;
                }
                c.commitSync();
            }
            System.out.println("rejected " + rejected + " again " + seen);
        }
    }

    static void drain(String bootstrap, String topic, String group, int idleMs, AcknowledgeType type, int pauseMs)
            throws InterruptedException {
        Properties slow = new Properties();
        if (pauseMs > 0) slow.put("max.poll.records", "100");
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, group, "explicit", slow)) {
            c.subscribe(List.of(topic));
            int got = 0;
            long start = System.currentTimeMillis(), last = start;
            // the first records may take a heartbeat or two (the assignment), so wait at least 5 s for them
            while (System.currentTimeMillis() - last < idleMs || (got == 0 && System.currentTimeMillis() - start < 5000)) {
                if (System.currentTimeMillis() - start > DEADLINE_MS) break;
                ConsumerRecords<String, String> batch = c.poll(Duration.ofMillis(100));
                if (!batch.isEmpty() && pauseMs > 0) Thread.sleep(pauseMs);
                for (ConsumerRecord<String, String> r : batch) {
                    print(r);
                    c.acknowledge(r, type);
                    got++;
                    last = System.currentTimeMillis();
                }
                c.commitSync();
            }
            System.out.println("drained " + got);
        }
    }

    static void limited(String bootstrap, String topic, String group, int count) {
        Properties p = new Properties();
        p.put("share.acquire.mode", "record_limit");
        p.put("max.poll.records", "3");
        try (KafkaShareConsumer<String, String> c = consumer(bootstrap, group, "implicit", p)) {
            c.subscribe(List.of(topic));
            int got = 0;
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (got < count && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> batch = c.poll(Duration.ofMillis(200));
                if (batch.isEmpty()) continue;
                System.out.println("poll " + batch.count());
                for (ConsumerRecord<String, String> r : batch) {
                    print(r);
                    got++;
                }
            }
            c.commitSync();
            System.out.println("consumed " + got);
        }
    }

    static void hold(String bootstrap, String topic, String group, int count) throws Exception {
        KafkaShareConsumer<String, String> c = consumer(bootstrap, group, "implicit");
        c.subscribe(List.of(topic));
        int got = 0;
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        while (got < count && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                print(r);
                got++;
            }
        }
        System.out.println("held " + got);
        System.out.flush();
        Thread.sleep(DEADLINE_MS);  // killed by the test before it wakes: its records stay acquired
    }

    static void describe(String bootstrap, String group) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            Collection<GroupListing> listed = admin.listGroups(ListGroupsOptions.forShareGroups()).all().get();
            for (GroupListing listing : listed)
                System.out.println("listed " + listing.groupId() + " " + listing.type().orElse(GroupType.UNKNOWN)
                        + " " + listing.groupState().map(Object::toString).orElse("?"));
            ShareGroupDescription d;
            try {
                d = admin.describeShareGroups(List.of(group)).describedGroups().get(group).get();
            } catch (java.util.concurrent.ExecutionException e) {
                System.out.println("missing " + e.getCause().getClass().getSimpleName());
                return;
            }
            System.out.println("group " + d.groupId() + " state=" + d.groupState() + " members=" + d.members().size()
                    + " epoch=" + (d.groupEpoch() == d.targetAssignmentEpoch() ? "assigned" : "behind"));
            for (ShareMemberDescription m : d.members()) {
                List<String> parts = new ArrayList<>();
                for (TopicPartition tp : m.assignment().topicPartitions()) parts.add(tp.topic() + "-" + tp.partition());
                Collections.sort(parts);
                System.out.println("member " + String.join(",", parts));
            }
        }
    }

    static void delete(String bootstrap, String group) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            try {
                admin.deleteShareGroups(List.of(group)).all().get();
                System.out.println("deleted");
            } catch (java.util.concurrent.ExecutionException e) {
                System.out.println("refused " + e.getCause().getClass().getSimpleName());
            }
        }
    }

    static void offsets(String bootstrap, String group) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            Map<TopicPartition, SharePartitionOffsetInfo> found = admin.listShareGroupOffsets(
                    Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get();
            List<String> lines = new ArrayList<>();
            for (Map.Entry<TopicPartition, SharePartitionOffsetInfo> e : found.entrySet())
                lines.add("offset " + e.getKey() + " " + e.getValue().startOffset() + " " + e.getValue().lag().orElse(-1L));
            Collections.sort(lines);
            lines.forEach(System.out::println);
            System.out.println("offsets " + lines.size());
        }
    }

    static void reset(String bootstrap, String group, String topic, long offset) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            admin.alterShareGroupOffsets(group, Map.of(new TopicPartition(topic, 0), offset)).all().get();
            System.out.println("reset");
        } catch (java.util.concurrent.ExecutionException e) {
            System.out.println("refused " + e.getCause().getClass().getSimpleName());
        }
    }

    static void forget(String bootstrap, String group, String topic) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
            System.out.println("forgot");
        } catch (java.util.concurrent.ExecutionException e) {
            System.out.println("refused " + e.getCause().getClass().getSimpleName());
        }
    }

    static int correlationId = 0;

    /** One request on a raw connection, in the client's own bytes both ways. */
    static AbstractResponse call(Socket socket, AbstractRequest request) throws Exception {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "share-persister", ++correlationId);
        ByteBuffer bytes = request.serializeWithHeader(header);
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(bytes.remaining());
        out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
        out.flush();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] body = new byte[in.readInt()];
        in.readFully(body);
        return AbstractResponse.parseResponse(ByteBuffer.wrap(body), header);
    }

    static Socket connect(String hostPort) throws Exception {
        int colon = hostPort.lastIndexOf(':');
        Socket socket = new Socket(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        socket.setSoTimeout(20_000);
        return socket;
    }

    static void persister(String bootstrap, String group, String topic, boolean init) throws Exception {
        Uuid topicId;
        try (Admin admin = admin(bootstrap)) {
            if (init) admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            topicId = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
        }
        String key = group + ":" + topicId + ":0";
        FindCoordinatorResponseData.Coordinator found = null;
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        try (Socket socket = connect(bootstrap)) {
            while (System.currentTimeMillis() < deadline) {
                FindCoordinatorResponse answer = (FindCoordinatorResponse) call(socket, new FindCoordinatorRequest.Builder(
                    new FindCoordinatorRequestData().setKeyType(FindCoordinatorRequest.CoordinatorType.SHARE.id())
                        .setCoordinatorKeys(List.of(key))).build((short) 6));
                found = answer.data().coordinators().get(0);
                if (found.errorCode() != Errors.COORDINATOR_NOT_AVAILABLE.code()) break;
                Thread.sleep(100);
            }
        }
        System.out.println("coordinator " + Errors.forCode(found.errorCode()) + " " + found.nodeId() + " " + found.key());
        try (Socket socket = connect(found.host() + ":" + found.port())) {
            if (init) {
                InitializeShareGroupStateResponse initialized = (InitializeShareGroupStateResponse) call(socket,
                    new InitializeShareGroupStateRequest.Builder(new InitializeShareGroupStateRequestData().setGroupId(group)
                        .setTopics(List.of(new InitializeShareGroupStateRequestData.InitializeStateData().setTopicId(topicId)
                            .setPartitions(List.of(
                                new InitializeShareGroupStateRequestData.PartitionData().setPartition(0).setStateEpoch(1).setStartOffset(0),
                                new InitializeShareGroupStateRequestData.PartitionData().setPartition(1).setStateEpoch(1).setStartOffset(-1))))))
                        .build((short) 0));
                for (InitializeShareGroupStateResponseData.PartitionResult r : initialized.data().results().get(0).partitions())
                    System.out.println("init " + r.partition() + " " + Errors.forCode(r.errorCode()));
                printRead(socket, group, topicId, 2);  // a leader at epoch 2 reads: older leaders are fenced
                for (int leaderEpoch : new int[] {2, 1}) {
                    WriteShareGroupStateResponse written = (WriteShareGroupStateResponse) call(socket,
                        new WriteShareGroupStateRequest.Builder(new WriteShareGroupStateRequestData().setGroupId(group)
                            .setTopics(List.of(new WriteShareGroupStateRequestData.WriteStateData().setTopicId(topicId)
                                .setPartitions(List.of(new WriteShareGroupStateRequestData.PartitionData().setPartition(0)
                                    .setStateEpoch(1).setLeaderEpoch(leaderEpoch).setStartOffset(0).setDeliveryCompleteCount(3)
                                    .setStateBatches(List.of(
                                        new WriteShareGroupStateRequestData.StateBatch().setFirstOffset(0).setLastOffset(2)
                                            .setDeliveryState((byte) 2).setDeliveryCount((short) 1),
                                        new WriteShareGroupStateRequestData.StateBatch().setFirstOffset(3).setLastOffset(4)
                                            .setDeliveryState((byte) 0).setDeliveryCount((short) 1))))))))
                            .build((short) 1));
                    WriteShareGroupStateResponseData.PartitionResult r = written.data().results().get(0).partitions().get(0);
                    System.out.println("write " + leaderEpoch + " " + Errors.forCode(r.errorCode()) + " " + r.errorMessage());
                }
            }
            printRead(socket, group, topicId, -1);
            printSummary(socket, group, topicId);
            if (init) {
                DeleteShareGroupStateResponse deleted = (DeleteShareGroupStateResponse) call(socket,
                    new DeleteShareGroupStateRequest.Builder(new DeleteShareGroupStateRequestData().setGroupId(group)
                        .setTopics(List.of(new DeleteShareGroupStateRequestData.DeleteStateData().setTopicId(topicId)
                            .setPartitions(List.of(new DeleteShareGroupStateRequestData.PartitionData().setPartition(0),
                                                   new DeleteShareGroupStateRequestData.PartitionData().setPartition(1))))))
                        .build((short) 0));
                for (DeleteShareGroupStateResponseData.PartitionResult r : deleted.data().results().get(0).partitions())
                    System.out.println("delete " + r.partition() + " " + Errors.forCode(r.errorCode()));
                printSummary(socket, group, topicId);
            }
        }
    }

    static void printRead(Socket socket, String group, Uuid topicId, int leaderEpoch) throws Exception {
        ReadShareGroupStateResponse read = (ReadShareGroupStateResponse) call(socket,
            new ReadShareGroupStateRequest.Builder(new ReadShareGroupStateRequestData().setGroupId(group)
                .setTopics(List.of(new ReadShareGroupStateRequestData.ReadStateData().setTopicId(topicId)
                    .setPartitions(List.of(new ReadShareGroupStateRequestData.PartitionData().setPartition(0)
                        .setLeaderEpoch(leaderEpoch))))))
                .build((short) 0));
        ReadShareGroupStateResponseData.PartitionResult state = read.data().results().get(0).partitions().get(0);
        System.out.println("read " + Errors.forCode(state.errorCode()) + " " + state.stateEpoch() + " " + state.startOffset());
        for (ReadShareGroupStateResponseData.StateBatch b : state.stateBatches())
            System.out.println("batch " + b.firstOffset() + " " + b.lastOffset() + " " + b.deliveryState() + " " + b.deliveryCount());
    }

    static void printSummary(Socket socket, String group, Uuid topicId) throws Exception {
        ReadShareGroupStateSummaryResponse summary = (ReadShareGroupStateSummaryResponse) call(socket,
            new ReadShareGroupStateSummaryRequest.Builder(new ReadShareGroupStateSummaryRequestData().setGroupId(group)
                .setTopics(List.of(new ReadShareGroupStateSummaryRequestData.ReadStateSummaryData().setTopicId(topicId)
                    .setPartitions(List.of(new ReadShareGroupStateSummaryRequestData.PartitionData().setPartition(0))))))
                .build((short) 1));
        ReadShareGroupStateSummaryResponseData.PartitionResult r = summary.data().results().get(0).partitions().get(0);
        System.out.println("summary " + Errors.forCode(r.errorCode()) + " " + r.stateEpoch() + " " + r.leaderEpoch()
            + " " + r.startOffset() + " " + r.deliveryCompleteCount());
    }
}
