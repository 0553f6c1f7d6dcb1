// Load driver for bench/broker_bench.py on Kafka's own Java client: like
// kafka-producer-perf-test / kafka-consumer-perf-test, but printing one
// machine-readable RESULT line. The Java client is not the bottleneck here
// (a Python loop calling produce() per record is) once its JIT has compiled
// the send and poll paths: both commands first move `warmup` records untimed
// (a cold JVM spends a run of a few seconds mostly compiling, and the
// broker's figure would be the JIT's).
//
//   produce BOOTSTRAP TOPIC RECORDS SIZE PRODUCERS [WARMUP]
//   consume BOOTSTRAP TOPIC RECORDS [WARMUP]   (reads WARMUP + RECORDS, times the last RECORDS)
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
        if (command.equals("produce")) {
            int warmup = args.length > 6 ? Integer.parseInt(args[6]) : 0;
            produce(bootstrap, topic, records, Integer.parseInt(args[4]), Integer.parseInt(args[5]), warmup);
        } else {
            consume(bootstrap, topic, records, args.length > 4 ? Integer.parseInt(args[4]) : 0);
        }
    }

    // `producers` KafkaProducers on their own threads share the records; one
    // producer alone can be the bottleneck on a small machine. The clock starts
    // when every producer has sent and flushed its share of the warm-up.
    static void produce(String bootstrap, String topic, int records, int size, int producers, int warmup) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("acks", "1");
        p.put("linger.ms", "5");
        p.put("batch.size", "1048576");
        p.put("buffer.memory", "268435456");
        p.put("max.request.size", "4194304");
        p.put("compression.type", "none");
        byte[] payload = new byte[size];
        new Random(1).nextBytes(payload);
        int[] latencies = new int[records];
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
                        final int index = i;
                        final long sent = System.nanoTime();
                        producer.send(new ProducerRecord<>(topic, payload), (metadata, error) -> {
                            if (error != null) failures.add(error);
                            latencies[index] = (int) ((System.nanoTime() - sent) / 1_000_000);
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
        int p99 = latencies[Math.min(records - 1, (int) (records * 0.99))];
        System.out.printf(Locale.ROOT, "RESULT %.1f %.2f %d%n", records / seconds, records * (double) size / (1 << 20) / seconds, p99);
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
        long bytes = 0;
        int seen = 0;
        int total = warmup + records;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic)) parts.add(new TopicPartition(topic, info.partition()));
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            long start = 0;
            int timedFrom = -1;  // records seen when the clock started: at the first poll after the warm-up
            long deadline = System.currentTimeMillis() + 120_000;
            while (seen < total && System.currentTimeMillis() < deadline) {
                if (timedFrom < 0 && seen >= warmup) {
                    timedFrom = seen;
                    start = System.nanoTime();
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    if (timedFrom >= 0) bytes += r.value().length;
                    seen++;
                }
            }
            if (seen < total) throw new IllegalStateException("consumed only " + seen + " of " + total);
            if (timedFrom < 0) throw new IllegalStateException("the warm-up polls read every record: nothing was timed");
            double seconds = (System.nanoTime() - start) / 1e9;
            int timed = seen - timedFrom;
            System.out.printf(Locale.ROOT, "RESULT %.1f %.2f%n", timed / seconds, bytes / (double) (1 << 20) / seconds);
        }
    }
}
