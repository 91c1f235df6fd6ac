package dev.sandboxmcp.http;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import java.io.IOException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;

/**
 * The JSON mapper the SDK parses and writes with, its errors worded without Java. The SDK puts an
 * exception's text into the JSON-RPC error it answers with 200 (an {@code initialize} whose
 * {@code capabilities} is an array named Jackson's exception class and the SDK's own types), where
 * {@link ErrorBodyFilter}, which rewrites error statuses only, never sees it. A value that does not
 * fit becomes a {@link Mismatch} that says where in the message, and nothing else.
 */
final class WordedJsonMapper implements McpJsonMapper {

    /** A value that does not fit its type: its text (and its {@code toString}, which the SDK may use) is the message alone. */
    static final class Mismatch extends IllegalArgumentException {
        Mismatch(String message) {
            super(message);
        }

        @Override
        public String toString() {
            return getMessage();
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(WordedJsonMapper.class);

    private final McpJsonMapper json;

    WordedJsonMapper(McpJsonMapper json) {
        this.json = json;
    }

    /** Where {@code e} happened, as {@code params.capabilities[0]}; empty when Jackson gave no path. */
    static String where(JacksonException e) {
        StringBuilder path = new StringBuilder();
        for (JacksonException.Reference reference : e.getPath()) {
            if (reference.getPropertyName() != null) {
                path.append(path.isEmpty() ? "" : ".").append(reference.getPropertyName());
            } else if (reference.getIndex() >= 0) {
                path.append('[').append(reference.getIndex()).append(']');
            }
        }
        return path.toString();
    }

    private static Mismatch mismatch(JacksonException e) {
        LOG.debug("a value that does not fit its type", e);
        String where = where(e);
        return new Mismatch("a value in the message does not have the type its field takes" + (where.isEmpty() ? "" : ": " + where));
    }

    /**
     * The {@link Mismatch} for a Jackson error that is {@code e} or one of its causes (the SDK's
     * adapter wraps a conversion's in an IllegalArgumentException, a reading's in an
     * IOException); null when there is none.
     */
    private static Mismatch mismatchIn(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof JacksonException jackson) {
                return mismatch(jackson);
            }
        }
        return null;
    }

    private static <T> T worded(Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            Mismatch mismatch = mismatchIn(e);
            throw mismatch != null ? mismatch : e;
        }
    }

    private interface Reading<T> {
        T read() throws IOException;
    }

    private static <T> T wordedReading(Reading<T> call) throws IOException {
        try {
            return call.read();
        } catch (RuntimeException | IOException e) {
            Mismatch mismatch = mismatchIn(e);
            if (mismatch != null) {
                throw mismatch;
            }
            throw e;
        }
    }

    @Override
    public <T> T readValue(String content, Class<T> type) throws IOException {
        return wordedReading(() -> json.readValue(content, type));
    }

    @Override
    public <T> T readValue(byte[] content, Class<T> type) throws IOException {
        return wordedReading(() -> json.readValue(content, type));
    }

    @Override
    public <T> T readValue(String content, TypeRef<T> type) throws IOException {
        return wordedReading(() -> json.readValue(content, type));
    }

    @Override
    public <T> T readValue(byte[] content, TypeRef<T> type) throws IOException {
        return wordedReading(() -> json.readValue(content, type));
    }

    @Override
    public <T> T convertValue(Object value, Class<T> type) {
        return worded(() -> json.convertValue(value, type));
    }

    @Override
    public <T> T convertValue(Object value, TypeRef<T> type) {
        return worded(() -> json.convertValue(value, type));
    }

    @Override
    public String writeValueAsString(Object value) throws IOException {
        return json.writeValueAsString(value);
    }

    @Override
    public byte[] writeValueAsBytes(Object value) throws IOException {
        return json.writeValueAsBytes(value);
    }
}
