package dev.sandboxmcp.runner;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.LinkedHashMap;
import java.util.Map;

/** The channel's framing: one JSON object per line, each line at most a given number of bytes. */
final class Wire {

    static final int VERSION = 1;

    private static final McpJsonMapper JSON = McpJsonDefaults.getMapper();
    private static final TypeRef<Map<String, Object>> OBJECT = new TypeRef<>() {
    };

    private Wire() {
    }

    /** A line that broke the framing: too long, not JSON, not an object, or of another version. */
    static final class FrameException extends IOException {
        FrameException(String message) {
            super(message);
        }
    }

    /** Reads the lines of one connection, holding at most {@code maxBytes} of a line. */
    static final class Reader {
        private final InputStream in;
        private final int maxBytes;
        private final byte[] buffer = new byte[16384];
        private int position;
        private int limit;

        Reader(InputStream in, int maxBytes) {
            this.in = in;
            this.maxBytes = maxBytes;
        }

        /**
         * The next line as a JSON object of this protocol's version, or null at end of stream
         * before any byte of a line.
         */
        Map<String, Object> next() throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream(Math.min(maxBytes, 8192));
            while (true) {
                if (position == limit) {
                    limit = in.read(buffer);
                    position = 0;
                    if (limit < 0) {
                        limit = 0;
                        if (line.size() == 0) {
                            return null;
                        }
                        throw new FrameException("the line ended without a newline");
                    }
                }
                int end = position;
                while (end < limit && buffer[end] != '\n') {
                    end++;
                }
                if (line.size() + (end - position) > maxBytes) {
                    throw new FrameException("a line longer than " + maxBytes + " bytes");
                }
                line.write(buffer, position, end - position);
                boolean complete = end < limit;
                position = complete ? end + 1 : end;
                if (complete) {
                    return parse(line.toByteArray());
                }
            }
        }
    }

    private static Map<String, Object> parse(byte[] line) throws FrameException {
        Map<String, Object> message;
        try {
            message = JSON.readValue(line, OBJECT);
        } catch (IOException | RuntimeException e) {
            message = null;
        }
        if (message == null) {
            throw new FrameException("a line that is not a JSON object");
        }
        if (!(message.get("v") instanceof Integer version) || version != VERSION) {
            throw new FrameException("protocol version " + message.get("v") + " (this side speaks " + VERSION + ")");
        }
        return message;
    }

    /** Writes {@code body} with the version as one line and flushes it. */
    static void write(OutputStream out, Map<String, Object> body) throws IOException {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("v", VERSION);
        message.putAll(body);
        byte[] bytes = JSON.writeValueAsBytes(message);
        synchronized (out) {
            out.write(bytes);
            out.write('\n');
            out.flush();
        }
    }
}
