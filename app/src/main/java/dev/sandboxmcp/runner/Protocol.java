package dev.sandboxmcp.runner;

import dev.sandboxmcp.config.Limits;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.ObjectWriteContext;
import tools.jackson.core.json.JsonFactory;

/**
 * The channel's protocol, whole: the table of message kinds ({@link #TABLE}: who may send each,
 * and when), and each kind as a record with its checks, encoder and decoder side by side. A line
 * is one JSON object whose first field {@code kind} names its row; anything else (another
 * sender's kind, a kind out of its phase, an unknown or repeated field, a field of the wrong type,
 * a value out of its range, a second value on the line) is a {@link Violation}. As in OpenSSH's
 * {@code monitor.c}, the table is the trust boundary: what is not in it cannot be asked.
 */
final class Protocol {

    static final int VERSION = 1;
    /** Ids, tool names, health check names and short texts. */
    static final int NAME_CHARS = 64;
    static final int REASON_CHARS = 200;
    static final int MAX_FAILED_CHECKS = 16;
    /** Far more than are declared: a welcome names each limit once. */
    static final int MAX_LIMITS = 256;

    private static final JsonFactory WRITER = JsonFactory.builder().build();

    private Protocol() {
    }

    /** Who sends a message. */
    enum Sender { SERVER, RUNNER }

    /** Before the runner has proved itself (the hello and its answer), and after. */
    enum Phase { HELLO, ESTABLISHED }

    /** One row of the table: a kind, who may send it, in which phase, and how it is read. */
    record Kind(String name, Class<? extends Message> type, Sender sender, Phase phase, Decoder decoder) {
    }

    @FunctionalInterface
    interface Decoder {
        Message read(Fields in) throws Violation;
    }

    /** The protocol. */
    static final List<Kind> TABLE = List.of(
            new Kind("hello", Hello.class, Sender.RUNNER, Phase.HELLO, Hello::read),
            new Kind("welcome", Welcome.class, Sender.SERVER, Phase.HELLO, Welcome::read),
            new Kind("refused", Refused.class, Sender.SERVER, Phase.HELLO, Refused::read),
            new Kind("call", Call.class, Sender.SERVER, Phase.ESTABLISHED, Call::read),
            new Kind("cancel", Cancel.class, Sender.SERVER, Phase.ESTABLISHED, Cancel::read),
            new Kind("ping", Ping.class, Sender.SERVER, Phase.ESTABLISHED, Ping::read),
            new Kind("progress", Progress.class, Sender.RUNNER, Phase.ESTABLISHED, Progress::read),
            new Kind("reply", Reply.class, Sender.RUNNER, Phase.ESTABLISHED, Reply::read),
            new Kind("pong", Pong.class, Sender.RUNNER, Phase.ESTABLISHED, Pong::read));

    private static final Map<String, Kind> BY_NAME = TABLE.stream().collect(Collectors.toMap(Kind::name, k -> k));
    private static final Map<Class<?>, Kind> BY_TYPE = TABLE.stream().collect(Collectors.toMap(Kind::type, k -> k));

    /** A message of the protocol; {@link #write} writes its fields after {@code kind}. */
    sealed interface Message permits Hello, Welcome, Refused, Call, Cancel, Ping, Progress, Reply, Pong {
        void write(JsonGenerator out);
    }

    /** A line that is not a message of this protocol, with what was wrong. */
    static final class Violation extends Exception {
        Violation(String message) {
            super(message);
        }
    }

    // ---- the kinds ----

    /** The runner's first line: the protocol version and the secret of this start. */
    record Hello(int version, Secret secret) implements Message {
        static Hello read(Fields in) throws Violation {
            Integer version = null;
            Secret secret = null;
            while (in.next()) {
                switch (in.name()) {
                    case "version" -> version = (int) in.number(0, Integer.MAX_VALUE);
                    case "secret" -> secret = Secret.fromHex(in.string(Secret.BYTES * 2));
                    default -> throw in.unknown();
                }
            }
            if (version == null || secret == null) {
                throw new Violation("a hello without its version or secret");
            }
            return new Hello(version, secret);
        }

        @Override
        public void write(JsonGenerator out) {
            out.writeNumberProperty("version", version);
            out.writeStringProperty("secret", secret.hex());
        }
    }

    /**
     * The server took the hello: calls may follow, within the limits it states. The server owns
     * the one configuration; the runner has no limits but these, checked against their
     * declarations ({@link Limits#fromValues}), and states none of its own.
     */
    record Welcome(Limits limits) implements Message {
        static Welcome read(Fields in) throws Violation {
            Limits limits = null;
            while (in.next()) {
                if (!in.name().equals("limits")) {
                    throw in.unknown();
                }
                Map<String, Long> values = in.numbers(MAX_LIMITS);
                try {
                    limits = Limits.fromValues(values);
                } catch (IllegalArgumentException e) {
                    throw new Violation("a welcome message with " + e.getMessage());
                }
            }
            return new Welcome(required(limits, "limits"));
        }

        @Override
        public void write(JsonGenerator out) {
            out.writeName("limits");
            out.writeStartObject();
            limits.values().forEach((name, value) -> out.writeNumberProperty(name, value.longValue()));
            out.writeEndObject();
        }
    }

    /** The server did not take the hello; the runner that gets this exits (its container restarts). */
    record Refused(String reason) implements Message {
        static Refused read(Fields in) throws Violation {
            String reason = null;
            while (in.next()) {
                if (!in.name().equals("reason")) {
                    throw in.unknown();
                }
                reason = in.string(REASON_CHARS);
            }
            return new Refused(required(reason, "reason"));
        }

        @Override
        public void write(JsonGenerator out) {
            out.writeStringProperty("reason", reason);
        }
    }

    /**
     * A tool call whose arguments passed the tool's input schema; {@code progress}: whether the
     * client listens for progress (it sent a progress token), so that none is made for nobody.
     */
    record Call(long id, String tool, Map<String, Object> arguments, boolean progress) implements Message {
        static Call read(Fields in) throws Violation {
            long id = 0;
            String tool = null;
            Map<String, Object> arguments = null;
            Boolean progress = null;
            while (in.next()) {
                switch (in.name()) {
                    case "id" -> id = in.id();
                    case "tool" -> tool = in.string(NAME_CHARS);
                    case "progress" -> progress = in.bool();
                    case "arguments" -> arguments = in.object();
                    default -> throw in.unknown();
                }
            }
            return new Call(requiredId(id), required(tool, "tool"), required(arguments, "arguments"),
                    required(progress, "progress"));
        }

        @Override
        public void write(JsonGenerator out) {
            out.writeNumberProperty("id", id);
            out.writeStringProperty("tool", tool);
            out.writeBooleanProperty("progress", progress);
            out.writeName("arguments");
            writeValue(out, arguments);
        }
    }

    /** The client cancelled call {@code id}: its command tree is killed. Unknown ids are ignored. */
    record Cancel(long id) implements Message {
        static Cancel read(Fields in) throws Violation {
            return new Cancel(onlyId(in));
        }

        @Override
        public void write(JsonGenerator out) {
            out.writeNumberProperty("id", id);
        }
    }

    /** Asks the runner for its health checks' report. */
    record Ping(long id) implements Message {
        static Ping read(Fields in) throws Violation {
            return new Ping(onlyId(in));
        }

        @Override
        public void write(JsonGenerator out) {
            out.writeNumberProperty("id", id);
        }
    }

    /** How far call {@code id} has come; {@code total} may be null. */
    record Progress(long id, double done, Double total, String message) implements Message {
        static Progress read(Fields in) throws Violation {
            long id = 0;
            Double done = null;
            Double total = null;
            String message = null;
            while (in.next()) {
                switch (in.name()) {
                    case "id" -> id = in.id();
                    case "done" -> done = in.decimal();
                    case "total" -> total = in.nullable() ? null : in.decimal();
                    case "message" -> message = in.string(REASON_CHARS);
                    default -> throw in.unknown();
                }
            }
            return new Progress(requiredId(id), required(done, "done"), total, required(message, "message"));
        }

        @Override
        public void write(JsonGenerator out) {
            out.writeNumberProperty("id", id);
            out.writeNumberProperty("done", done);
            out.writeName("total");
            if (total == null) {
                out.writeNull();
            } else {
                out.writeNumber(total);
            }
            out.writeStringProperty("message", message);
        }
    }

    /**
     * The answer to call {@code id}: a tool result without its target (the server knows that from
     * the call, never from the runner). A success carries its structured content.
     */
    record Reply(long id, boolean error, String text, Map<String, Object> structured, Integer exitCode, Long bytes,
            boolean timedOut) implements Message {
        static Reply read(Fields in) throws Violation {
            long id = 0;
            Boolean error = null;
            String text = null;
            Map<String, Object> structured = null;
            Integer exitCode = null;
            Long bytes = null;
            boolean timedOut = false;
            while (in.next()) {
                switch (in.name()) {
                    case "id" -> id = in.id();
                    case "error" -> error = in.bool();
                    case "text" -> text = in.string(Integer.MAX_VALUE);
                    case "structured" -> structured = in.object();
                    case "exit_code" -> exitCode = (int) in.number(Integer.MIN_VALUE, Integer.MAX_VALUE);
                    case "bytes" -> bytes = in.number(0, Long.MAX_VALUE);
                    case "timed_out" -> timedOut = in.bool();
                    default -> throw in.unknown();
                }
            }
            Reply reply = new Reply(requiredId(id), required(error, "error"), required(text, "text"), structured, exitCode,
                    bytes, timedOut);
            if (!reply.error && structured == null) {
                throw new Violation("a successful reply without its structured content");
            }
            return reply;
        }

        @Override
        public void write(JsonGenerator out) {
            out.writeNumberProperty("id", id);
            out.writeBooleanProperty("error", error);
            out.writeStringProperty("text", text);
            if (structured != null) {
                out.writeName("structured");
                writeValue(out, structured);
            }
            if (exitCode != null) {
                out.writeNumberProperty("exit_code", exitCode);
            }
            if (bytes != null) {
                out.writeNumberProperty("bytes", bytes);
            }
            out.writeBooleanProperty("timed_out", timedOut);
        }
    }

    /** The answer to ping {@code id}: the names of the runner's checks that failed (none: healthy). */
    record Pong(long id, List<String> failed) implements Message {
        static Pong read(Fields in) throws Violation {
            long id = 0;
            List<String> failed = null;
            while (in.next()) {
                switch (in.name()) {
                    case "id" -> id = in.id();
                    case "failed" -> failed = in.strings(MAX_FAILED_CHECKS, NAME_CHARS);
                    default -> throw in.unknown();
                }
            }
            return new Pong(requiredId(id), required(failed, "failed"));
        }

        @Override
        public void write(JsonGenerator out) {
            out.writeNumberProperty("id", id);
            out.writeName("failed");
            out.writeStartArray();
            failed.forEach(out::writeString);
            out.writeEndArray();
        }
    }

    // ---- encoding and decoding a line ----

    /** {@code message} as one line, its newline included. */
    static byte[] encode(Message message) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        try (JsonGenerator out = WRITER.createGenerator(ObjectWriteContext.empty(), bytes)) {
            out.writeStartObject();
            out.writeStringProperty("kind", BY_TYPE.get(message.getClass()).name());
            message.write(out);
            out.writeEndObject();
        }
        bytes.write('\n');
        return bytes.toByteArray();
    }

    /**
     * The message on {@code line} (no newline), which {@code sender} sent in {@code phase}, parsed
     * within the bounds of {@code factory}.
     */
    static Message decode(byte[] line, int length, Sender sender, Phase phase, JsonFactory factory) throws Violation {
        try (JsonParser parser = factory.createParser(ObjectReadContext.empty(), line, 0, length)) {
            if (parser.nextToken() != JsonToken.START_OBJECT || parser.nextToken() != JsonToken.PROPERTY_NAME
                    || !"kind".equals(parser.currentName()) || parser.nextToken() != JsonToken.VALUE_STRING) {
                throw new Violation("a line that is not an object starting with its kind");
            }
            String name = parser.getString();
            Kind kind = BY_NAME.get(name);
            if (kind == null) {
                throw new Violation("an unknown kind '" + cut(name) + "'");
            }
            if (kind.sender() != sender || kind.phase() != phase) {
                throw new Violation("a " + name + " message, which only the " + kind.sender().name().toLowerCase()
                        + " sends, in the " + kind.phase().name().toLowerCase() + " phase");
            }
            Message message = kind.decoder().read(new Fields(parser, name));
            if (parser.nextToken() != null) {
                throw new Violation("more than one value on a line");
            }
            return message;
        } catch (JacksonException e) {
            throw new Violation("a line that breaks the JSON bounds or syntax (" + cut(e.getOriginalMessage()) + ")");
        }
    }

    /**
     * The {@code id} of the message on {@code line}, read within the bounds of {@code factory}
     * without building its other values (a string is skipped, not decoded): for a line whose
     * message will not be read whole.
     */
    static long idOf(byte[] line, int length, JsonFactory factory) throws Violation {
        try (JsonParser parser = factory.createParser(ObjectReadContext.empty(), line, 0, length)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new Violation("a line that is not an object");
            }
            while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
                boolean id = "id".equals(parser.currentName());
                JsonToken value = parser.nextToken();
                if (id) {
                    if (value != JsonToken.VALUE_NUMBER_INT || parser.getNumberType() != JsonParser.NumberType.INT
                            && parser.getNumberType() != JsonParser.NumberType.LONG || parser.getLongValue() < 1) {
                        throw new Violation("a message whose id is not a positive whole number");
                    }
                    return parser.getLongValue();
                }
                parser.skipChildren();
            }
            throw new Violation("a message without an id");
        } catch (JacksonException e) {
            throw new Violation("a line that breaks the JSON bounds or syntax (" + cut(e.getOriginalMessage()) + ")");
        }
    }

    /**
     * {@code call} as one line, refused here when the runner, reading within {@code bounds}, would
     * refuse it (and break the connection of every call): its arguments are counted as a parser
     * counts them (tokens, nesting, the length of each string, key and number) before they are
     * written, and the line's bytes after, so that no call is parsed again to be checked.
     */
    static byte[] encode(Call call, Bounds bounds) throws Violation {
        if (call.tool().length() > NAME_CHARS) {
            throw new Violation("a tool name longer than " + NAME_CHARS + " characters");
        }
        new Tally(bounds, CALL_TOKENS).value(call.arguments(), CALL_DEPTH);
        byte[] line = encode(call);
        if (line.length - 1 > bounds.lineBytes()) {
            throw new Violation("a message of " + (line.length - 1) + " bytes, over the bound of " + bounds.lineBytes());
        }
        return line;
    }

    /** A call's own tokens around its arguments: its braces, the names kind, id, tool, progress and arguments, and four values. */
    static final int CALL_TOKENS = 11;
    /** The nesting of a call's arguments object: inside the message's own. */
    private static final int CALL_DEPTH = 2;

    /** What a parser within {@link Bounds} counts of a value made of maps, lists, strings, numbers, booleans and nulls. */
    private static final class Tally {
        private final Bounds bounds;
        private long tokens;

        /** {@code tokens}: those counted already, around the value. */
        Tally(Bounds bounds, long tokens) {
            this.bounds = bounds;
            this.tokens = tokens;
        }

        void value(Object value, int depth) throws Violation {
            tokens++;
            switch (value) {
                case Map<?, ?> map -> {
                    nested(depth);
                    for (Map.Entry<?, ?> entry : map.entrySet()) {
                        tokens++;
                        String name = String.valueOf(entry.getKey());
                        if (name.length() > Bounds.NAME_CHARS) {
                            throw new Violation("a key longer than " + Bounds.NAME_CHARS + " characters");
                        }
                        value(entry.getValue(), depth + 1);
                    }
                    tokens++;
                }
                case List<?> list -> {
                    nested(depth);
                    for (Object item : list) {
                        value(item, depth + 1);
                    }
                    tokens++;
                }
                case String string when string.length() > bounds.stringChars() -> throw new Violation("a string of "
                        + string.length() + " characters, over the bound of " + bounds.stringChars());
                case BigInteger number -> digits(number.toString());
                case BigDecimal number -> digits(number.toString());
                default -> {
                    // a short string, a boolean, null, or a number of at most 24 characters
                }
            }
            if (tokens > bounds.tokens()) {
                throw new Violation("more than " + bounds.tokens() + " JSON tokens");
            }
        }

        private void nested(int depth) throws Violation {
            if (depth > bounds.depth()) {
                throw new Violation("nesting deeper than " + bounds.depth());
            }
        }

        private static void digits(String number) throws Violation {
            if (number.length() > Bounds.NUMBER_CHARS) {
                throw new Violation("a number of " + number.length() + " characters, over the bound of "
                        + Bounds.NUMBER_CHARS);
            }
        }
    }

    // ---- the fields of one message, read with their checks ----

    /** The fields of the message being read, each read as the type its record expects. */
    static final class Fields {
        private final JsonParser parser;
        private final String kind;
        private final java.util.Set<String> seen = new java.util.HashSet<>();
        private String field;

        Fields(JsonParser parser, String kind) {
            this.parser = parser;
            this.kind = kind;
        }

        /** Moves to the next field's value; false at the end of the message. */
        boolean next() throws Violation {
            JsonToken token = parser.nextToken();
            if (token == JsonToken.END_OBJECT) {
                return false;
            }
            if (token != JsonToken.PROPERTY_NAME) {
                throw new Violation("a " + kind + " message cut short");
            }
            field = parser.currentName();
            if (!seen.add(field)) {
                throw new Violation("a " + kind + " message with field '" + cut(parser.currentName()) + "' twice");
            }
            parser.nextToken();
            return true;
        }

        String name() {
            return field;
        }

        Violation unknown() {
            return new Violation("a " + kind + " message with an unknown field '" + cut(name()) + "'");
        }

        private Violation wrong(String expected) {
            return new Violation("a " + kind + " message whose " + cut(name()) + " is not " + expected);
        }

        String string(int maxChars) throws Violation {
            if (parser.currentToken() != JsonToken.VALUE_STRING) {
                throw wrong("a string");
            }
            String value = parser.getString();
            if (value.length() > maxChars) {
                throw wrong("at most " + maxChars + " characters long");
            }
            return value;
        }

        boolean bool() throws Violation {
            return switch (parser.currentToken()) {
                case VALUE_TRUE -> true;
                case VALUE_FALSE -> false;
                default -> throw wrong("true or false");
            };
        }

        boolean nullable() {
            return parser.currentToken() == JsonToken.VALUE_NULL;
        }

        long number(long min, long max) throws Violation {
            if (parser.currentToken() != JsonToken.VALUE_NUMBER_INT || parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                throw wrong("an integer");
            }
            long value = parser.getLongValue();
            if (value < min || value > max) {
                throw wrong("within " + min + ".." + max);
            }
            return value;
        }

        long id() throws Violation {
            return number(1, Long.MAX_VALUE);
        }

        double decimal() throws Violation {
            if (parser.currentToken() != JsonToken.VALUE_NUMBER_INT && parser.currentToken() != JsonToken.VALUE_NUMBER_FLOAT) {
                throw wrong("a number");
            }
            double value = parser.getDoubleValue();
            if (!Double.isFinite(value)) {
                throw wrong("a finite number");
            }
            return value;
        }

        List<String> strings(int maxItems, int maxChars) throws Violation {
            if (parser.currentToken() != JsonToken.START_ARRAY) {
                throw wrong("an array");
            }
            List<String> values = new ArrayList<>();
            while (parser.nextToken() != JsonToken.END_ARRAY) {
                if (values.size() == maxItems) {
                    throw wrong("at most " + maxItems + " items");
                }
                values.add(string(maxChars));
            }
            return List.copyOf(values);
        }

        /** An object of whole numbers, at most {@code maxItems} of them, each key once. */
        Map<String, Long> numbers(int maxItems) throws Violation {
            if (parser.currentToken() != JsonToken.START_OBJECT) {
                throw wrong("an object");
            }
            Map<String, Long> values = new LinkedHashMap<>();
            while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
                String key = parser.currentName();
                if (values.size() == maxItems) {
                    throw wrong("at most " + maxItems + " items");
                }
                parser.nextToken();
                if (values.put(key, number(Long.MIN_VALUE, Long.MAX_VALUE)) != null) {
                    throw new Violation("a " + kind + " message with the key '" + cut(key) + "' twice in an object");
                }
            }
            return values;
        }

        /** A JSON object passed through (arguments, structured results), within the parser's bounds. */
        Map<String, Object> object() throws Violation {
            if (parser.currentToken() != JsonToken.START_OBJECT) {
                throw wrong("an object");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> value = (Map<String, Object>) value(parser);
            return value;
        }

        private Object value(JsonParser in) throws Violation {
            return switch (in.currentToken()) {
                case START_OBJECT -> {
                    Map<String, Object> map = new LinkedHashMap<>();
                    while (in.nextToken() == JsonToken.PROPERTY_NAME) {
                        String key = in.currentName();
                        in.nextToken();
                        if (map.put(key, value(in)) != null) {
                            throw new Violation("a " + kind + " message with the key '" + cut(key) + "' twice in an object");
                        }
                    }
                    yield map;
                }
                case START_ARRAY -> {
                    List<Object> list = new ArrayList<>();
                    while (in.nextToken() != JsonToken.END_ARRAY) {
                        list.add(value(in));
                    }
                    yield list;
                }
                case VALUE_STRING -> in.getString();
                case VALUE_NUMBER_INT -> in.getNumberValue();
                case VALUE_NUMBER_FLOAT -> {
                    double number = in.getDoubleValue();
                    if (!Double.isFinite(number)) { // 1e400: it would go out to the client as the string "Infinity"
                        throw new Violation("a " + kind + " message with a number out of a double's range");
                    }
                    yield number;
                }
                case VALUE_TRUE -> Boolean.TRUE;
                case VALUE_FALSE -> Boolean.FALSE;
                case VALUE_NULL -> null;
                default -> throw new Violation("a " + kind + " message cut short");
            };
        }
    }

    /** Writes a JSON value made of maps, lists, strings, numbers, booleans and nulls (what the tools build). */
    static void writeValue(JsonGenerator out, Object value) {
        switch (value) {
            case null -> out.writeNull();
            case Map<?, ?> map -> {
                out.writeStartObject();
                for (Map.Entry<?, ?> entry : map.entrySet()) {
                    out.writeName(String.valueOf(entry.getKey()));
                    writeValue(out, entry.getValue());
                }
                out.writeEndObject();
            }
            case List<?> list -> {
                out.writeStartArray();
                list.forEach(item -> writeValue(out, item));
                out.writeEndArray();
            }
            case String s -> out.writeString(s);
            case Boolean b -> out.writeBoolean(b);
            case Integer i -> out.writeNumber(i);
            case Long l -> out.writeNumber(l);
            case Double d -> out.writeNumber(d);
            case Float f -> out.writeNumber(f);
            case BigInteger b -> out.writeNumber(b);
            case BigDecimal b -> out.writeNumber(b);
            case Number n -> out.writeNumber(n.doubleValue());
            default -> throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
        }
    }

    private static <T> T required(T value, String field) throws Violation {
        if (value == null) {
            throw new Violation("a message without its " + field);
        }
        return value;
    }

    private static long requiredId(long id) throws Violation {
        if (id <= 0) {
            throw new Violation("a message without its id");
        }
        return id;
    }

    private static long onlyId(Fields in) throws Violation {
        long id = 0;
        while (in.next()) {
            if (!in.name().equals("id")) {
                throw in.unknown();
            }
            id = in.id();
        }
        return requiredId(id);
    }

    private static String cut(String text) {
        return text == null ? "" : text.length() <= 80 ? text : text.substring(0, 80) + "...";
    }

    /** Both lists name every kind, for the docs and the tests. */
    static List<String> kinds() {
        return TABLE.stream().map(Kind::name).toList();
    }
}
