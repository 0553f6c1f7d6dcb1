import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.Readable;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.protocol.types.Schema;

/**
 * kafka-clients' own generated message classes (org.apache.kafka.common.message.*Data) as an oracle for
 * franz's codecs. Reads one command a line from stdin and answers one JSON line on stdout:
 *
 * parse CLASS VERSION HEX        the bytes read by CLASS (its Readable constructor) and by its SCHEMAS[VERSION],
 *                                both of which must consume every byte; answers {"json": CLASS's JsonConverter
 *                                form, "bytes": HEX of what CLASS writes back}
 * build CLASS VERSION JSON       CLASS made by its JsonConverter from JSON and written: {"bytes": HEX}
 * default CLASS VERSION         CLASS as its no-argument constructor makes it, written: {"bytes": HEX}
 * build-tagged CLASS VERSION TAG HEX JSON   as build, with an unknown tagged field TAG (data HEX) added to the
 *                                top-level struct
 * json-text CLASS VERSION HEX    the bytes read by CLASS, written by its JsonConverter and that node's toString():
 *                                {"text": the JSON as Kafka's tools and request log print it}
 *
 * CLASS is a simple name such as StreamsGroupHeartbeatRequestData or ConsumerProtocolSubscription. An error answers {"error": "..."}.
 */
public class MessageOracle {
    static final ObjectMapper MAPPER = new ObjectMapper();
    static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            ObjectNode answer = MAPPER.createObjectNode();
            try {
                answer = answer(line.split(" ", 4));
            } catch (Throwable e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                answer.put("error", cause.getClass().getSimpleName() + ": " + cause.getMessage());
            }
            System.out.println(MAPPER.writeValueAsString(answer));
            System.out.flush();
        }
    }

    static ObjectNode answer(String[] words) throws Exception {
        Class<?> data = Class.forName("org.apache.kafka.common.message." + words[1]);
        Class<?> converter = Class.forName("org.apache.kafka.common.message." + words[1] + "JsonConverter");
        short version = Short.parseShort(words[2]);
        ObjectNode answer = MAPPER.createObjectNode();
        switch (words[0]) {
            case "parse": {
                byte[] bytes = HEX.parseHex(words[3]);
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                ApiMessage message = (ApiMessage) data.getConstructor(Readable.class, short.class)
                    .newInstance(new ByteBufferAccessor(buffer), version);
                if (buffer.hasRemaining())
                    throw new IllegalStateException(buffer.remaining() + " bytes left after the message");
                Schema schema = ((Schema[]) data.getField("SCHEMAS").get(null))[version];
                ByteBuffer again = ByteBuffer.wrap(bytes);
                schema.read(again);
                if (again.hasRemaining())
                    throw new IllegalStateException(again.remaining() + " bytes left after SCHEMA_" + version);
                answer.set("json", (JsonNode) converter.getMethod("write", data, short.class)
                    .invoke(null, message, version));
                answer.put("bytes", hex(message, version));
                return answer;
            }
            case "json-text": {
                ApiMessage message = (ApiMessage) data.getConstructor(Readable.class, short.class)
                    .newInstance(new ByteBufferAccessor(ByteBuffer.wrap(HEX.parseHex(words[3]))), version);
                answer.put("text", converter.getMethod("write", data, short.class)
                    .invoke(null, message, version).toString());
                return answer;
            }
            case "build": {
                ApiMessage message = fromJson(converter, words[3], version);
                answer.put("bytes", hex(message, version));
                return answer;
            }
            case "default": {
                answer.put("bytes", hex((ApiMessage) data.getConstructor().newInstance(), version));
                return answer;
            }
            case "build-tagged": {
                String[] rest = words[3].split(" ", 3);
                ApiMessage message = fromJson(converter, rest[2], version);
                message.unknownTaggedFields().add(new RawTaggedField(Integer.parseInt(rest[0]),
                    HEX.parseHex(rest[1])));
                answer.put("bytes", hex(message, version));
                return answer;
            }
            default:
                throw new IllegalArgumentException("unknown command " + words[0]);
        }
    }

    static ApiMessage fromJson(Class<?> converter, String json, short version) throws Exception {
        return (ApiMessage) converter.getMethod("read", JsonNode.class, short.class)
            .invoke(null, MAPPER.readTree(json), version);
    }

    static String hex(ApiMessage message, short version) {
        ByteBuffer buffer = MessageUtil.toByteBufferAccessor(message, version).buffer();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return HEX.formatHex(bytes);
    }
}
