package dev.selene.node.replay;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.engine.trace.TraceRequest;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads Mooncake-format traces (the FAST'25 trace release): one JSON object per line with {@code timestamp}
 * (ms), {@code input_length}, {@code output_length} and {@code hash_ids}, the request's 512-token prefix blocks.
 * A malformed line is an {@link IllegalArgumentException} naming the file and line.
 */
public final class MooncakeTrace {

    private MooncakeTrace() {
    }

    /** Writes {@code trace} to {@code file} in the same format, one request per line. */
    public static void write(Path file, List<TraceRequest> trace) {
        ObjectMapper mapper = new ObjectMapper();
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (TraceRequest r : trace) {
                out.write(mapper.writeValueAsString(new Line(r.timestampMillis(), r.inputLength(), r.outputLength(),
                        r.hashIds())));
                out.write('\n');
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("trace '" + file + "' cannot be written: " + e.getMessage());
        }
    }

    /** One line of the format, field names as the trace release spells them. */
    private record Line(@JsonProperty("timestamp") long timestampMillis,
                        @JsonProperty("input_length") int inputLength,
                        @JsonProperty("output_length") int outputLength,
                        @JsonProperty("hash_ids") long[] hashIds) {
    }

    /** The first {@code limit} requests of {@code file} (all when {@code limit <= 0}), in file order. */
    public static List<TraceRequest> read(Path file, int limit) {
        ObjectMapper mapper = new ObjectMapper();
        List<TraceRequest> out = new ArrayList<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int n = 0;
            while ((line = in.readLine()) != null && (limit <= 0 || out.size() < limit)) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                out.add(parse(mapper, file, n, line));
            }
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("trace '" + file + "' does not exist");
        } catch (IOException e) {
            throw new IllegalArgumentException("trace '" + file + "' cannot be read: " + e.getMessage());
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("trace '" + file + "' has no requests");
        }
        return out;
    }

    /**
     * {@code v} as a whole number, or null: an integer that fits 64 bits, or a number written with a fraction or an
     * exponent whose value is whole and fits (1200.0, as some tools write integers); never text, never rounded.
     */
    private static Long whole(JsonNode v) {
        if (v == null || !v.isNumber()) {
            return null;
        }
        if (v.isIntegralNumber()) {
            return v.canConvertToLong() ? v.asLong() : null;
        }
        try {
            return v.decimalValue().stripTrailingZeros().longValueExact();
        } catch (ArithmeticException e) {
            return null; // a fraction, or too large
        }
    }

    private static TraceRequest parse(ObjectMapper mapper, Path file, int lineNo, String line) {
        try {
            JsonNode n = mapper.readTree(line);
            JsonNode ids = n.get("hash_ids");
            if (ids == null || !ids.isArray() || !n.hasNonNull("timestamp") || !n.hasNonNull("input_length")) {
                throw new IllegalArgumentException("expected timestamp, input_length and hash_ids");
            }
            long[] hashIds = new long[ids.size()];
            for (int i = 0; i < hashIds.length; i++) {
                Long id = whole(ids.get(i));
                if (id == null) {
                    throw new IllegalArgumentException("hash_ids[" + i + "] is not a whole number that fits 64 bits");
                }
                hashIds[i] = id;
            }
            Long timestamp = whole(n.get("timestamp"));
            Long input = whole(n.get("input_length"));
            if (timestamp == null || timestamp < 0 || input == null || input < 0 || input > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("timestamp and input_length must be non-negative whole numbers "
                        + "(milliseconds and tokens; input_length at most " + Integer.MAX_VALUE + ")");
            }
            JsonNode outputNode = n.path("output_length");
            Long output = outputNode.isMissingNode() || outputNode.isNull() ? Long.valueOf(0) : whole(outputNode);
            if (output == null || output < 0 || output > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("output_length must be a non-negative whole number");
            }
            return new TraceRequest(timestamp, input.intValue(), output.intValue(), hashIds);
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("trace '" + file + "' line " + lineNo + " is malformed: "
                    + e.getMessage().lines().findFirst().orElse(""));
        }
    }
}
