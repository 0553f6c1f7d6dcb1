/* Load driver for bench/broker_bench.py on librdkafka, the C client: like
 * kafka-producer-perf-test / kafka-consumer-perf-test, printing one RESULT line.
 * At 100-byte records Kafka's Java client is the bottleneck on a two-core
 * machine (it used ~1.6 cores to send 0.9-1.1 M records/s while the broker
 * used ~0.4), so every broker's figure converged on the client's. librdkafka
 * spends a fraction of that per record and needs no JIT warm-up.
 *
 *   produce BOOTSTRAP TOPIC RECORDS SIZE [RATE]   -> RESULT msgs/s MB/s p99_ms
 *   consume BOOTSTRAP TOPIC RECORDS               -> RESULT msgs/s MB/s
 *
 * produce: keyless records of SIZE random bytes, linger.ms=5, batch.size=1 MiB,
 * acks=1, no compression; the latency of a record runs from rd_kafka_produce()
 * to its delivery report; the clock starts once one untimed record has been
 * delivered (the producer is connected and knows the leader). RATE (records/s,
 * 0 = as fast as it goes) paces the records as kafka-producer-perf-test
 * --throughput does. consume: assign() of
 * every partition from the beginning, no group, until RECORDS are read, taken from
 * the consumer queue in batches of up to CONSUME_BATCH.
 *
 * Built by broker_bench.py against the header of Debian's librdkafka-dev and
 * linked to the newer librdkafka inside the confluent-kafka wheel (Debian's
 * 2.0.2 cannot parse Tansu 0.6.0's ApiVersions answer). Exit status 1 on any
 * delivery error or when the records do not all arrive within the deadline.
 */
#include <librdkafka/rdkafka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEADLINE_NS (120LL * 1000000000LL)  /* under broker_bench.py's 180 s: the driver says how far it got */
#define CONSUME_BATCH 10000
#define WARMUP_INDEX (-1L)  /* the _private of the record that connects the producer, untimed */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
    char err[512];
    if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "config %s=%s: %s\n", key, value, err);
        exit(2);
    }
}

/* Per record: when it was handed to librdkafka, then its latency in microseconds (whole
 * milliseconds made a paced p99 of 6-8 ms a choice between three values). */
static int64_t *sent_ns;
static int *latency_us;
static long delivered, failed;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *message, void *opaque) {
    (void)rk;
    (void)opaque;
    long index = (long)(intptr_t)message->_private;
    if (message->err) {
        if (failed++ == 0) fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(message->err));
        return;
    }
    if (index == WARMUP_INDEX) return;
    latency_us[index] = (int)((now_ns() - sent_ns[index]) / 1000);
    delivered++;
}

static int compare_int(const void *a, const void *b) {
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static int produce(const char *bootstrap, const char *topic, long records, int size, double rate,
                   const char *compression) {
    char err[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "linger.ms", "5");
    set(conf, "batch.size", "1048576");
    set(conf, "acks", "1");
    set(conf, "compression.type", compression);
    /* The queue bound of kafka-producer-perf-test: the Java producer's default buffer.memory,
     * 32 MiB, counted in bytes only. Unpaced, the client makes records faster than any broker
     * here takes them and the queue fills; bounded, a record's wait is about the bound over
     * the broker's drain rate. Unbounded (1 GiB), it grew with the run's length instead (franz,
     * 1 KiB x 1: p99 107-267 ms over 150,000 records, 184-256 ms over 450,000; bounded, 100 and
     * 133-139 ms), and with the CPU a broker left the producing thread. */
    set(conf, "queue.buffering.max.kbytes", "32768");
    set(conf, "queue.buffering.max.messages", "10000000");
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (rk == NULL) {
        fprintf(stderr, "producer: %s\n", err);
        return 1;
    }
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    char *payload = malloc(size);
    srand(1);
    for (int i = 0; i < size; i++) payload[i] = (char)rand();
    /* Connected before the clock starts. produce() does not wait for metadata: until the
     * client knows the partition's leader and has a connection to it, records pile up
     * unassigned, and at full speed that was 8-40 ms of records (17,000 in 10 ms at 1.7 M/s
     * per producer): in 5 of 12 producer runs of 100 B x 1 partition (franz 2 of 6, noida-db
     * 3 of 6), the whole p99 tail was records sent in the run's first 4 ms (a /tmp probe that
     * dumped every 50th record's send time and latency). kafka-producer-perf-test's send()
     * blocks on the first metadata fetch instead, so there only the first record waits for it.
     * One record delivered first makes the C driver measure what that tool measures. */
    if (rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, payload, size, NULL, 0,
                         (void *)(intptr_t)WARMUP_INDEX) == -1) {
        fprintf(stderr, "warm-up record: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
        return 1;
    }
    rd_kafka_resp_err_t flushed = rd_kafka_flush(rk, 30000);
    if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR || failed) {  /* a failed delivery printed its own error */
        if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR)
            fprintf(stderr, "warm-up record not delivered: %s\n", rd_kafka_err2str(flushed));
        return 1;
    }
    sent_ns = calloc(records, sizeof *sent_ns);
    latency_us = calloc(records, sizeof *latency_us);
    int64_t start = now_ns();
    for (long i = 0; i < records; i++) {
        if (rate > 0) {  /* record i is due i / rate seconds after the start */
            /* Delivery reports are timed when rd_kafka_poll() serves them, so the wait
             * for the next record is spent polling: a report never waits for a poll. */
            int64_t ahead;
            while ((ahead = start + (int64_t)(i / rate * 1e9) - now_ns()) >= 1000000) rd_kafka_poll(rk, 1);
            if (ahead > 0) {
                struct timespec pause = {0, ahead};
                nanosleep(&pause, NULL);
            }
            rd_kafka_poll(rk, 0);
        }
        sent_ns[i] = now_ns();
        while (rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, payload, size, NULL, 0,
                                (void *)(intptr_t)i) == -1) {
            if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL || now_ns() - start > DEADLINE_NS) {
                fprintf(stderr, "produce: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
                return 1;
            }
            rd_kafka_poll(rk, 1);  /* a full queue: serve delivery reports until there is room */
        }
        if ((i & 255) == 0) rd_kafka_poll(rk, 0);  /* unpaced: every ~0.1 ms at 2 M records/s */
    }
    while (delivered + failed < records && now_ns() - start < DEADLINE_NS) rd_kafka_poll(rk, 10);
    double seconds = (now_ns() - start) / 1e9;
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    if (failed || delivered < records) {
        fprintf(stderr, "delivered %ld of %ld records, %ld failed\n", delivered, records, failed);
        return 1;
    }
    qsort(latency_us, records, sizeof *latency_us, compare_int);
    long p99_index = (long)(records * 0.99);
    if (p99_index >= records) p99_index = records - 1;
    printf("RESULT %.1f %.2f %.3f\n", records / seconds, records * (double)size / (1 << 20) / seconds,
           latency_us[p99_index] / 1000.0);
    return 0;
}

static int consume(const char *bootstrap, const char *topic, long records) {
    char err[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "group.id", "rdkafka-perf");  /* required by the consumer API; never joined: assign() only */
    set(conf, "enable.auto.commit", "false");
    set(conf, "receive.message.max.bytes", "1073741824");  /* noida-db answers with whole partitions */
    /* Once a partition's local queue holds queued.min.messages (100,000), librdkafka stops
     * fetching it for fetch.queue.backoff.ms, 1 s by default. At 100 B a broker that answers
     * faster than this loop drains fills that queue in a few fetches, and the run then
     * idled ~970 ms with nothing left to read: the figure measured the client's sleep (one
     * franz run of 900,000 records: 0.61 M records/s with the default, 1.84 M with 10 ms).
     * 10 ms still lets ~75,000 records wait in the queue when fetching resumes. */
    set(conf, "fetch.queue.backoff.ms", "10");
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    if (rk == NULL) {
        fprintf(stderr, "consumer: %s\n", err);
        return 1;
    }
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *metadata;
    rd_kafka_resp_err_t found = rd_kafka_metadata(rk, 0, rkt, &metadata, 10000);
    if (found || metadata->topic_cnt != 1 || metadata->topics[0].err) {
        fprintf(stderr, "metadata of %s: %s\n", topic, rd_kafka_err2str(found ? found : metadata->topics[0].err));
        return 1;
    }
    rd_kafka_topic_partition_list_t *partitions = rd_kafka_topic_partition_list_new(metadata->topics[0].partition_cnt);
    for (int p = 0; p < metadata->topics[0].partition_cnt; p++)
        rd_kafka_topic_partition_list_add(partitions, topic, metadata->topics[0].partitions[p].id)->offset =
            RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_metadata_destroy(metadata);
    rd_kafka_topic_destroy(rkt);
    int64_t start = now_ns();
    rd_kafka_assign(rk, partitions);
    long seen = 0;
    double bytes = 0;
    /* Records are taken CONSUME_BATCH at a time (rd_kafka_consume_batch_queue, what
     * confluent-kafka's Consumer.consume(n) calls), not one rd_kafka_consumer_poll() each:
     * per record, that poll took the queue lock against the fetcher thread. With
     * 900,000 x 100 B records from one partition the client then spent 0.55-0.66 s of CPU
     * (perf: futex waits and wakes beside clock_gettime) and read 2.2-2.5 M records/s
     * from every broker alike, the client's own ceiling; batched it spent 0.2 s. */
    rd_kafka_queue_t *queue = rd_kafka_queue_get_consumer(rk);
    static rd_kafka_message_t *batch[CONSUME_BATCH];
    while (seen < records && now_ns() - start < DEADLINE_NS) {
        ssize_t taken = rd_kafka_consume_batch_queue(queue, 100, batch, CONSUME_BATCH);
        if (taken < 0) {
            fprintf(stderr, "consume: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
            return 1;
        }
        for (ssize_t i = 0; i < taken; i++) {
            rd_kafka_message_t *message = batch[i];
            if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                seen++;
                bytes += message->len;
            } else if (message->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                fprintf(stderr, "consume: %s\n", rd_kafka_message_errstr(message));
                return 1;
            }
            rd_kafka_message_destroy(message);
        }
    }
    rd_kafka_queue_destroy(queue);
    double seconds = (now_ns() - start) / 1e9;
    rd_kafka_topic_partition_list_destroy(partitions);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    if (seen < records) {
        fprintf(stderr, "consumed only %ld of %ld records\n", seen, records);
        return 1;
    }
    printf("RESULT %.1f %.2f\n", seen / seconds, bytes / (1 << 20) / seconds);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 6 && strcmp(argv[1], "produce") == 0)
        return produce(argv[2], argv[3], atol(argv[4]), atoi(argv[5]), argc > 6 ? atof(argv[6]) : 0,
                       argc > 7 ? argv[7] : "none");
    if (argc == 5 && strcmp(argv[1], "consume") == 0) return consume(argv[2], argv[3], atol(argv[4]));
    fprintf(stderr, "usage: %s produce BOOTSTRAP TOPIC RECORDS SIZE [RATE [COMPRESSION]] | consume BOOTSTRAP TOPIC RECORDS\n",
            argv[0]);
    return 2;
}
