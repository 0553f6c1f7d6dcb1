import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.Set;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;

/**
 * Kafka's own MemoryRecords.filterTo over files of batches, for franz's record_filter tests.
 *
 * Argument: a file of cases, one per line:
 *   in out currentTime deleteRetentionMs dropKeys deleteBatches retainEmptyBatches emptyTxnMarkers
 * (the last four comma-separated, "-" for none; keys as UTF-8, "null" for a null key; batches by
 * last offset). For each case, writes the filtered batches to `out` and prints the FilterResult's
 * counters on one line. One JVM serves every case.
 */
public class RecordFilterOracle {
    private static Set<String> set(String csv) {
        Set<String> result = new HashSet<>();
        if (csv.equals("-")) return result;
        for (String item : csv.split(",")) if (!item.isEmpty()) result.add(item);
        return result;
    }

    public static void main(String[] args) throws Exception {
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            if (!line.isBlank()) filter(line.trim().split(" "));
        }
    }

    private static void filter(String[] fields) throws Exception {
        byte[] input = Files.readAllBytes(Paths.get(fields[0]));
        long currentTime = Long.parseLong(fields[2]);
        long deleteRetentionMs = Long.parseLong(fields[3]);
        Set<String> dropKeys = set(fields[4]);
        Set<String> deleteBatches = set(fields[5]);
        Set<String> retainEmpty = set(fields[6]);
        Set<String> emptyTxnMarkers = set(fields[7]);
        MemoryRecords.RecordFilter filter = new MemoryRecords.RecordFilter(currentTime, deleteRetentionMs) {
            @Override
            protected BatchRetentionResult checkBatchRetention(RecordBatch batch) {
                String last = Long.toString(batch.lastOffset());
                BatchRetention retention = deleteBatches.contains(last) ? BatchRetention.DELETE
                    : retainEmpty.contains(last) ? BatchRetention.RETAIN_EMPTY : BatchRetention.DELETE_EMPTY;
                return new BatchRetentionResult(retention, emptyTxnMarkers.contains(last));
            }

            @Override
            protected boolean shouldRetainRecord(RecordBatch batch, Record record) {
                String key = record.hasKey() ? StandardCharsets.UTF_8.decode(record.key()).toString() : "null";
                return !dropKeys.contains(key);
            }
        };
        ByteBuffer output = ByteBuffer.allocate(input.length * 2 + 4096);
        MemoryRecords.FilterResult result = MemoryRecords.readableRecords(ByteBuffer.wrap(input))
            .filterTo(filter, output, BufferSupplier.NO_CACHING);
        ByteBuffer written = result.outputBuffer();
        written.flip();
        byte[] bytes = new byte[written.remaining()];
        written.get(bytes);
        Files.write(Paths.get(fields[1]), bytes);
        System.out.println(result.messagesRead() + " " + result.bytesRead() + " " + result.messagesRetained() + " "
            + result.bytesRetained() + " " + result.maxOffset() + " " + result.maxTimestamp() + " "
            + result.shallowOffsetOfMaxTimestamp());
    }
}
