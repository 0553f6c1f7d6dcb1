// Load driver for bench/broker_bench.py on Kafka's own Java client: like
// kafka-producer-perf-test / kafka-consumer-perf-test, but printing one
// machine-readable RESULT line. The Java client is not the bottleneck here
// (a Python loop calling produce() per record is) once its JIT has compiled
// the send and poll paths: both commands first move `warmup` records untimed
// (a cold JVM spends a run of a few seconds mostly compiling, and the
// broker's figure would be the JIT's).
//
// RATE (records/s over all producers, 0 = as fast as the client goes) paces the
// timed records as kafka-producer-perf-test --throughput does: a producer that
// is ahead of its share of the rate sleeps until it is due. Unpaced, the p99 is
// mostly the client's own queue (records wait in its accumulator, of the default
// 32 MiB as in kafka-producer-perf-test, for the sender thread); paced below
// every broker's capacity, it is the broker's.
//
//   produce BOOTSTRAP TOPIC RECORDS SIZE PRODUCERS [WARMUP [RATE]]
//   consume BOOTSTRAP TOPIC RECORDS [WARMUP]   (reads WARMUP + RECORDS, times what is left after WARMUP)
//   share-consume BOOTSTRAP TOPIC RECORDS GROUP  (a KafkaShareConsumer of GROUP, implicit acknowledgement,
//                                                 from the first record to the last; the group reads from
//                                                 the earliest offset)
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.serialization.*;

public class PerfDriver {
    public static void main(String[] args) throws Exception {
        String command = args[0], bootstrap = args[1], topic = args[2];
        int records = Integer.parseInt(args[3]);
        if (command.equals("share-consume")) {
            shareConsume(bootstrap, topic, records, args[4]);
        } else if (command.equals("produce")) {
            int warmup = args.length > 6 ? Integer.parseInt(args[6]) : 0;
            double rate = args.length > 7 ? Double.parseDouble(args[7]) : 0;
            produce(bootstrap, topic, records, Integer.parseInt(args[4]), Integer.parseInt(args[5]), warmup, rate);
        } else {
            consume(bootstrap, topic, records, args.length > 4 ? Integer.parseInt(args[4]) : 0);
        }
    }

    // `producers` KafkaProducers on their own threads share the records; one
    // producer alone can be the bottleneck on a small machine. The clock starts
    // when every producer has sent and flushed its share of the warm-up.
    static void produce(String bootstrap, String topic, int records, int size, int producers, int warmup,
                        double rate) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "1");
        p.put("linger.ms", "5");
        p.put("batch.size", "1048576");
        p.put("max.request.size", "4194304");
        p.put("compression.type", "none");
        byte[] payload = new byte[size];
        new Random(1).nextBytes(payload);
        int[] latencies = new int[records];  // microseconds
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        long[] start = new long[1];
        java.util.concurrent.CyclicBarrier warm = new java.util.concurrent.CyclicBarrier(producers, () -> start[0] = System.nanoTime());
        for (int t = 0; t < producers; t++) {
            final int first = t;
            Thread thread = new Thread(() -> {
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
                    for (int i = first; i < warmup; i += producers) {
                        producer.send(new ProducerRecord<>(topic, payload), (metadata, error) -> {
                            if (error != null) failures.add(error);
                        });
                    }
                    producer.flush();
                    warm.await(60, java.util.concurrent.TimeUnit.SECONDS);
                    for (int i = first; i < records; i += producers) {
                        if (rate > 0) {  // record i is due i / rate seconds after the clock started
                            long ahead = start[0] + (long) (i / rate * 1e9) - System.nanoTime();
                            if (ahead > 0) java.util.concurrent.locks.LockSupport.parkNanos(ahead);
                        }
                        final int index = i;
                        final long sent = System.nanoTime();
                        producer.send(new ProducerRecord<>(topic, payload), (metadata, error) -> {
                            if (error != null) failures.add(error);
                            latencies[index] = (int) ((System.nanoTime() - sent) / 1_000);
                        });
                    }
                    producer.flush();
                } catch (Throwable e) {
                    failures.add(e);
                    warm.reset();  // threads waiting stop (BrokenBarrierException); later ones time out
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) thread.join();
        if (!failures.isEmpty()) throw new RuntimeException(failures.get(0));
        double seconds = (System.nanoTime() - start[0]) / 1e9;
        Arrays.sort(latencies);
        double p99Ms = latencies[Math.min(records - 1, (int) (records * 0.99))] / 1000.0;
        System.out.printf(Locale.ROOT, "RESULT %.1f %.2f %.3f%n", records / seconds, records * (double) size / (1 << 20) / seconds, p99Ms);
    }

    static void consume(String bootstrap, String topic, int records, int warmup) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        // Kafka's default fetch sizes (1 MiB a partition, 50 MiB a fetch). With 10 / 100 MiB a
        // broker that honours them (as Kafka does, up to its own 55 MiB fetch.max.bytes) answered
        // 8 partitions with 55 MiB at a time, and the consumer, which sends no fetch while it
        // works through one, read 1 KiB records at a third of the speed it reads smaller answers.
        p.put("max.partition.fetch.bytes", "1048576");
        p.put("fetch.max.bytes", "52428800");
        p.put("max.poll.records", "100000");
        p.put("receive.buffer.bytes", "4194304");
        int total = warmup + records;
        List<TopicPartition> parts = new ArrayList<>();
        Map<TopicPartition, Long> positions = new HashMap<>();
        // The warm-up consumer compiles the poll path; the timed one is a fresh consumer in the
        // same (warm) JVM that starts where it stopped, so nothing prefetched for the first one
        // (a broker that ignores the fetch limits sends whole partitions at once) is timed as read.
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            for (PartitionInfo info : consumer.partitionsFor(topic)) parts.add(new TopicPartition(topic, info.partition()));
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            int seen = 0;
            long deadline = System.currentTimeMillis() + 120_000;
            while (seen < warmup && System.currentTimeMillis() < deadline) seen += consumer.poll(Duration.ofMillis(100)).count();
            if (seen < warmup) throw new IllegalStateException("warm-up consumed only " + seen + " of " + warmup);
            for (TopicPartition part : parts) positions.put(part, consumer.position(part));
        }
        // Offsets are dense here (no transactions, no compaction): an offset is a count of records.
        long remaining = total - positions.values().stream().mapToLong(Long::longValue).sum();
        if (remaining <= 0) throw new IllegalStateException("the warm-up read every record: nothing is left to time");
        long bytes = 0;
        long seen = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(parts);
            positions.forEach(consumer::seek);
            long start = System.nanoTime();
            long deadline = System.currentTimeMillis() + 120_000;
            while (seen < remaining && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    bytes += r.value().length;
                    seen++;
                }
            }
            if (seen < remaining) throw new IllegalStateException("consumed only " + seen + " of " + remaining);
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf(Locale.ROOT, "RESULT %.1f %.2f%n", seen / seconds, bytes / (double) (1 << 20) / seconds);
        }
    }

    // A share group acknowledges what it read (implicitly, at the next poll and at the commit), so
    // the clock stops once the last record's acknowledgement is written, not when it arrives.
    // No warm-up consumer: a share group hands each record out once, so a second consumer would
    // find nothing left; the JIT's share of the time is the same for every broker it runs against.
    static void shareConsume(String bootstrap, String topic, int records, String group) throws Exception {
        Properties a = new Properties();
        a.put("bootstrap.servers", bootstrap);
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(a)) {
            org.apache.kafka.common.config.ConfigResource resource =
                new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                new org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"),
                org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get();
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        // as the plain consumer's: a poll takes all it has (the broker acquires at most
        // group.share.partition.max.record.locks, 2000, of a partition at a time anyway)
        p.put("max.poll.records", "100000");
        p.put("max.partition.fetch.bytes", "1048576");
        p.put("fetch.max.bytes", "52428800");
        p.put("receive.buffer.bytes", "4194304");
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long bytes = 0, seen = 0, start = 0;
            long deadline = System.currentTimeMillis() + 180_000;
            while (seen < records && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    if (seen == 0) start = System.nanoTime();
                    bytes += r.value().length;
                    seen++;
                }
            }
            if (seen < records) throw new IllegalStateException("share-consumed only " + seen + " of " + records);
            consumer.commitSync();
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf(Locale.ROOT, "RESULT %.1f %.2f%n", seen / seconds, bytes / (double) (1 << 20) / seconds);
        }
    }
}
