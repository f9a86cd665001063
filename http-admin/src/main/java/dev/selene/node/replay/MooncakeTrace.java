package dev.selene.node.replay;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import dev.selene.engine.trace.TraceRequest;
import dev.selene.node.Failures;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads Mooncake-format traces (the FAST'25 trace release): one JSON object per line with {@code timestamp}
 * (ms), {@code input_length}, {@code output_length} and {@code hash_ids}, the request's 512-token prefix blocks.
 * A malformed line (not UTF-8 text, not one JSON object, or a field missing or out of range) is an
 * {@link IllegalArgumentException} naming the file and line, in plain words.
 */
public final class MooncakeTrace {

    private MooncakeTrace() {
    }

    /** Writes {@code trace} to {@code file} in the same format, one request per line. */
    public static void write(Path file, List<TraceRequest> trace) {
        ObjectMapper mapper = new ObjectMapper();
        // Written beside the file and moved over it once whole: a write that fails (a full disk) leaves a file that
        // was there as it was, and no half of a trace.
        Path partial = file.resolveSibling(file.getFileName() + ".partial");
        try {
            try (BufferedWriter out = Files.newBufferedWriter(partial, StandardCharsets.UTF_8)) {
                for (TraceRequest r : trace) {
                    out.write(mapper.writeValueAsString(new Line(r.timestampMillis(), r.inputLength(),
                            r.outputLength(), r.hashIds())));
                    out.write('\n');
                }
            }
            Files.move(partial, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(partial);
            } catch (IOException ignored) {
                // the failure below is the news
            }
            throw new IllegalArgumentException("trace '" + file + "' cannot be written: " + Failures.io(e));
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
        // A field twice on a line is refused, not read as its last value.
        ObjectMapper mapper = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder();
        List<TraceRequest> out = new ArrayList<>();
        // Lines are split on their bytes (ISO-8859-1 maps each byte to one char) and decoded one by one, so a byte
        // that is not UTF-8 is reported with its line; UTF-8 never has a line break's byte inside a character.
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1)) {
            String bytes;
            int n = 0;
            while ((bytes = in.readLine()) != null && (limit <= 0 || out.size() < limit)) {
                n++;
                String line = utf8(utf8, file, n, bytes);
                if (n == 1 && line.startsWith("\uFEFF")) {
                    line = line.substring(1); // a byte-order mark some editors write first: not part of the JSON
                }
                if (line.isBlank()) {
                    continue;
                }
                out.add(parse(mapper, file, n, line));
            }
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("trace '" + file + "' does not exist");
        } catch (IOException e) {
            throw new IllegalArgumentException("trace '" + file + "' cannot be read: " + Failures.io(e));
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("trace '" + file + "' has no requests");
        }
        return out;
    }

    /** Line {@code lineNo}'s bytes (one char each) as UTF-8 text, or one line saying where they are not. */
    private static String utf8(CharsetDecoder decoder, Path file, int lineNo, String bytes) {
        boolean ascii = true;
        for (int i = 0; i < bytes.length() && ascii; i++) {
            ascii = bytes.charAt(i) < 0x80;
        }
        if (ascii) {
            return bytes;
        }
        ByteBuffer in = ByteBuffer.wrap(bytes.getBytes(StandardCharsets.ISO_8859_1));
        CharBuffer text = CharBuffer.allocate(bytes.length()); // UTF-8 never decodes to more chars than bytes
        decoder.reset();
        CoderResult result = decoder.decode(in, text, true);
        if (!result.isError()) {
            result = decoder.flush(text);
        }
        if (result.isError()) {
            throw new IllegalArgumentException("trace '" + file + "' line " + lineNo + " is malformed: not UTF-8 "
                    + "text (byte " + (in.position() + 1) + " of the line)");
        }
        return text.flip().toString();
    }

    /** Why {@code line} is not one JSON value, in plain words: where it goes wrong, never the parser's message. */
    private static String notJson(JsonProcessingException e, String line) {
        JsonLocation at = e.getLocation();
        int column = at == null ? -1 : at.getColumnNr();
        String original = String.valueOf(e.getOriginalMessage());
        if (e instanceof StreamConstraintsException) {
            return (original.contains("nesting depth") ? "arrays or objects nested too deeply"
                    : "a number or string too long to read") + (column > 0 ? " (column " + column + ")" : "");
        }
        if (original.startsWith("Duplicate field ")) {
            return "the field " + original.substring("Duplicate field ".length()) + " appears twice";
        }
        if (e instanceof JsonEOFException eof) {
            JsonParser p = e.getProcessor() instanceof JsonParser parser ? parser : null;
            String inside = eof.getTokenBeingDecoded() == JsonToken.VALUE_STRING ? "a string"
                    : p != null && p.getParsingContext() != null && p.getParsingContext().inArray() ? "an array"
                    : p != null && p.getParsingContext() != null && p.getParsingContext().inObject() ? "an object"
                    : "a value";
            return "not valid JSON: the line ends inside " + inside;
        }
        if (e instanceof MismatchedInputException) {
            return "not valid JSON: more than one value on the line" + (column > 0 ? " (the second at column "
                    + column + ")" : "");
        }
        if (column <= 0) {
            return "not valid JSON";
        }
        char c = column <= line.length() ? line.charAt(column - 1) : ' ';
        return "not valid JSON at column " + column + (c > ' ' && c < 0x7f ? " ('" + c + "')" : "");
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
        if (!Double.isFinite(v.doubleValue())) {
            return null; // beyond a double's range: 1e400 reads as infinity
        }
        try {
            return v.decimalValue().stripTrailingZeros().longValueExact();
        } catch (ArithmeticException e) {
            return null; // a fraction, or too large
        }
    }

    private static TraceRequest parse(ObjectMapper mapper, Path file, int lineNo, String line) {
        try {
            JsonNode n;
            try {
                n = mapper.readTree(line);
            } catch (JsonProcessingException e) {
                throw new IllegalArgumentException(notJson(e, line));
            }
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
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("trace '" + file + "' line " + lineNo + " is malformed: "
                    + e.getMessage().lines().findFirst().orElse(""));
        }
    }
}
