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
 * Kafka's own MemoryRecords.filterTo over a file of batches, for franz's record_filter tests.
 *
 * Arguments: in out currentTime deleteRetentionMs dropKeys deleteBatches retainEmptyBatches emptyTxnMarkers
 * (the last four comma-separated; keys as UTF-8, "null" for a null key; batches by last offset).
 * Writes the filtered batches to `out` and prints the FilterResult's counters on one line.
 */
public class RecordFilterOracle {
    private static Set<String> set(String csv) {
        Set<String> result = new HashSet<>();
        for (String item : csv.split(",")) if (!item.isEmpty()) result.add(item);
        return result;
    }

    public static void main(String[] args) throws Exception {
        byte[] input = Files.readAllBytes(Paths.get(args[0]));
        long currentTime = Long.parseLong(args[2]);
        long deleteRetentionMs = Long.parseLong(args[3]);
        Set<String> dropKeys = set(args[4]);
        Set<String> deleteBatches = set(args[5]);
        Set<String> retainEmpty = set(args[6]);
        Set<String> emptyTxnMarkers = set(args[7]);
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
        Files.write(Paths.get(args[1]), bytes);
        System.out.println(result.messagesRead() + " " + result.bytesRead() + " " + result.messagesRetained() + " "
            + result.bytesRetained() + " " + result.maxOffset() + " " + result.maxTimestamp() + " "
            + result.shallowOffsetOfMaxTimestamp());
    }
}
