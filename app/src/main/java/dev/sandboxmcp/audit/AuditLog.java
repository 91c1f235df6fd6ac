package dev.sandboxmcp.audit;

import dev.sandboxmcp.WholeChars;
import java.io.PrintStream;
import java.io.StringWriter;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.ObjectWriteContext;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.json.JsonWriteFeature;

/**
 * Writes one JSON object per line, two lines per tool call (one as it starts, {@code
 * tool_call_started}, and one as it ends, {@code tool_call}, both with the call's number and the
 * server run's id: numbers start again at 1 when the server restarts, the pair does not repeat),
 * whatever a value holds: every
 * character outside printable ASCII is a {@code \\uXXXX} escape (line breaks, U+2028, half a surrogate
 * pair), so the line is one line to any reader that splits lines, and a string longer than
 * {@link #VALUE_CHARS} is cut there, with {@code <name>_chars} giving its full length.
 */
public final class AuditLog {

    /** The most characters of one string value (a command line, a path, an error) a line carries. */
    public static final int VALUE_CHARS = 4096;
    /** A run's id: 48 random bits, so that two runs of one deployment share one by a chance of about 2^-48. */
    static final int RUN_DIGITS = 12;

    private static final JsonFactory JSON = JsonFactory.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    private static final SecureRandom RANDOM = new SecureRandom();

    private final PrintStream out;
    private final String run;
    private final AtomicLong calls = new AtomicLong();

    /** A log of a new run: its id is 12 random hex digits. */
    public AuditLog(PrintStream out) {
        this.out = out;
        this.run = HexFormat.of().toHexDigits(RANDOM.nextLong(), RUN_DIGITS);
    }

    /** The id every line of this run carries as {@code run}. */
    public String run() {
        return run;
    }

    /** A number no other call of this log has: 1, 2, 3, ... */
    public long nextCall() {
        return calls.incrementAndGet();
    }

    public void started(CallStarted call) {
        write(call.time(), "tool_call_started", call.call(), call.tool(), call.target(), line -> {
            string(line, "client", call.client());
            string(line, "peer", call.peer());
        });
    }

    public void record(AuditEvent event) {
        write(event.time(), "tool_call", event.call(), event.tool(), event.target(), line -> {
            line.writeStringProperty("outcome", event.outcome().name().toLowerCase(Locale.ROOT));
            if (event.exitCode() != null) {
                line.writeNumberProperty("exit_code", event.exitCode());
            }
            if (event.bytes() != null) {
                line.writeNumberProperty("bytes", event.bytes());
            }
            line.writeNumberProperty("duration_ms", event.durationMillis());
            string(line, "client", event.client());
            string(line, "peer", event.peer());
            if (event.error() != null) {
                string(line, "error", event.error());
            }
        });
    }

    /** One line: the fields both kinds open with, then {@code rest}. */
    private void write(Instant time, String event, long call, String tool, String target, Consumer<JsonGenerator> rest) {
        StringWriter text = new StringWriter();
        try (JsonGenerator line = JSON.createGenerator(ObjectWriteContext.empty(), text)) {
            line.writeStartObject();
            line.writeStringProperty("time", time.toString());
            line.writeStringProperty("event", event);
            line.writeStringProperty("run", run);
            line.writeNumberProperty("call", call);
            string(line, "tool", tool);
            string(line, "target", target);
            rest.accept(line);
            line.writeEndObject();
        }
        synchronized (out) {
            out.println(text);
            out.flush();
        }
    }

    /** {@code value} (null included), cut to {@link #VALUE_CHARS} with its full length beside it when longer. */
    private static void string(JsonGenerator line, String name, String value) {
        if (value == null || value.length() <= VALUE_CHARS) {
            line.writeStringProperty(name, value);
            return;
        }
        line.writeStringProperty(name, WholeChars.prefix(value, VALUE_CHARS));
        line.writeNumberProperty(name + "_chars", value.length());
    }
}
