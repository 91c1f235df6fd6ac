package dev.sandboxmcp.http;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.json.JsonFactory;

/**
 * Checks the JSON-RPC envelope of every MCP message POST before the SDK sees it, in one streaming
 * pass that builds no tree, and answers what it cannot accept with a JSON-RPC error (HTTP 400):
 * not one JSON object, nested deeper or holding more tokens than {@link JsonBounds} allows, an
 * envelope the SDK would answer with a serialized Java exception (params that are not an object,
 * batches). A message that passes is charged to the body budget for what its shape costs once the
 * SDK parses it ({@link JsonBounds#worstCost}), and its envelope (jsonrpc, id, method, and of
 * params only name, requestId, reason and {@code _meta.progressToken}) is left on the request for
 * the filters after this one ({@link #MESSAGE_ATTRIBUTE}). The envelope's strings that are kept,
 * echoed or logged after the parse have bounds of their own ({@link JsonBounds#MAX_METHOD_CHARS},
 * {@link JsonBounds#MAX_ID_CHARS}, the longest tool name, {@link JsonBounds#MAX_PROGRESS_TOKEN_CHARS}).
 */
final class JsonRpcEnvelopeFilter extends PostFilter {

    /** Request attribute holding the envelope of the message this filter passed (a {@code Map<String, Object>}). */
    static final String MESSAGE_ATTRIBUTE = "sandbox-mcp.jsonrpc-message";
    /** Stands for a value that is an array or an object where the envelope wants a scalar. */
    private static final Object STRUCTURE = new Object() {
        @Override
        public String toString() {
            return "(structure)";
        }
    };

    private final JsonBounds bounds;
    private final JsonFactory json;

    JsonRpcEnvelopeFilter(JsonBounds bounds) {
        this.bounds = bounds;
        this.json = bounds.envelopeFactory();
    }

    @Override
    void doPost(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        ReceivedBody body = ReceivedBody.of(request);
        Scan scan = null;
        try (InputStream in = body.open()) {
            scan = new Scan(json.createParser(ObjectReadContext.empty(), in), bounds);
            scan.message();
        } catch (Refused refused) {
            // An id read before the refusal is answered (a string of the envelope past its bound is one).
            JsonRpcErrors.write(response, scan == null ? null : answerable(scan.top.get("id")), refused.problem);
            return;
        } catch (StreamConstraintsException tooLong) {
            JsonRpcErrors.write(response, null, Problem.tooLong(bounds));
            return;
        } catch (JacksonException notJson) {
            JsonRpcErrors.write(response, null, Problem.parseError("the body is not a JSON object"));
            return;
        }
        Map<String, Object> message = scan.top;
        Problem problem = problemWith(message, bounds);
        if (problem != null) {
            JsonRpcErrors.write(response, answerable(message.get("id")), problem);
            return;
        }
        long cost = JsonBounds.worstCost(body.length(), scan.tokens) - body.length();
        RequestBodyBudget.Charge charge = body.charge();
        RequestBodyBudget.Outcome outcome;
        try {
            outcome = charge.add(cost); // the bytes are charged already, as they arrived
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for room for a body", e);
        }
        if (outcome == RequestBodyBudget.Outcome.PAST_THE_BUDGET) {
            JsonRpcErrors.write(response, message.get("id"),
                    Problem.tooCostly(JsonBounds.worstCost(body.length(), scan.tokens), charge.capacity()));
            return;
        }
        if (outcome == RequestBodyBudget.Outcome.BUSY) {
            response.setHeader("Retry-After", "5");
            JsonRpcErrors.write(response, message.get("id"), Problem.busy(charge.capacity()));
            return;
        }
        request.setAttribute(MESSAGE_ATTRIBUTE, message);
        chain.doFilter(request, response);
    }

    /** What is wrong with the envelope, or null when the SDK can take it. */
    static Problem problemWith(Map<String, Object> message, JsonBounds bounds) {
        if (!"2.0".equals(message.get("jsonrpc"))) {
            return Problem.invalidRequest("\"jsonrpc\" must be \"2.0\"");
        }
        Object id = message.get("id");
        if (id != null && !(id instanceof String) && !(id instanceof Number)) {
            return Problem.invalidRequest("\"id\" must be a string or a number");
        }
        if (tooLong(id, JsonBounds.MAX_ID_CHARS)) {
            return Problem.tooLongInEnvelope("\"id\"", JsonBounds.MAX_ID_CHARS);
        }
        Object method = message.get("method");
        if (method == null) {
            boolean response = message.containsKey("result") || message.containsKey("error");
            return response && id != null ? null : Problem.invalidRequest("\"method\" is missing");
        }
        if (!(method instanceof String name) || name.isEmpty()) {
            return Problem.invalidRequest("\"method\" must be a non-empty string");
        }
        if (tooLong(name, JsonBounds.MAX_METHOD_CHARS)) {
            return Problem.tooLongInEnvelope("\"method\"", JsonBounds.MAX_METHOD_CHARS);
        }
        Object params = message.get("params");
        if (params != null && !(params instanceof Map)) {
            return Problem.invalidParams("params must be an object");
        }
        if (params instanceof Map<?, ?> given) {
            if (tooLong(given.get("requestId"), JsonBounds.MAX_ID_CHARS)) {
                return requestIdTooLong();
            }
            if (given.get("_meta") instanceof Map<?, ?> meta && tooLong(meta.get("progressToken"),
                    JsonBounds.MAX_PROGRESS_TOKEN_CHARS)) {
                return progressTokenTooLong();
            }
        }
        if (name.equals("tools/call")) {
            if (!(params instanceof Map<?, ?> call) || !(call.get("name") instanceof String tool)) {
                return Problem.invalidParams("params of tools/call must be an object with a string \"name\"");
            }
            if (tool.length() > bounds.maxToolNameChars()) {
                return toolNameTooLong(bounds);
            }
            Object arguments = call.get("arguments");
            if (arguments != null && !(arguments instanceof Map)) {
                return Problem.invalidParams("params.arguments of tools/call must be an object");
            }
        }
        return null;
    }

    static Problem toolNameTooLong(JsonBounds bounds) {
        return Problem.tooLongInParams("params.name of tools/call", bounds.maxToolNameChars(),
                "the longest tool name; tools/list names every tool");
    }

    static Problem requestIdTooLong() {
        return Problem.tooLongInParams("params.requestId", JsonBounds.MAX_ID_CHARS, "the id of the request it names");
    }

    static Problem progressTokenTooLong() {
        return Problem.tooLongInParams("params._meta.progressToken", JsonBounds.MAX_PROGRESS_TOKEN_CHARS,
                "a client's counter or id");
    }

    /** The id to answer a refusal with: the message's, unless it is no id or too long to echo. */
    private static Object answerable(Object id) {
        return (id instanceof String || id instanceof Number) && !tooLong(id, JsonBounds.MAX_ID_CHARS) ? id : null;
    }

    /** Whether {@code value}, a string or a number as written, is longer than {@code maxChars}. */
    static boolean tooLong(Object value, int maxChars) {
        return (value instanceof String || value instanceof Number) && String.valueOf(value).length() > maxChars;
    }

    /** A refusal found while scanning, carried out of the scan. */
    private static final class Refused extends RuntimeException {
        final transient Problem problem;

        Refused(Problem problem) {
            super(problem.message(), null, false, false);
            this.problem = problem;
        }
    }

    /**
     * One pass over the body: keeps the envelope's scalars, skips everything else, counting every
     * token and the depth against the bounds. Later duplicates of a name win, as in the SDK's parse.
     */
    private static final class Scan {
        private final JsonParser parser;
        private final JsonBounds bounds;
        final Map<String, Object> top = new HashMap<>();
        long tokens;

        Scan(JsonParser parser, JsonBounds bounds) {
            this.parser = parser;
            this.bounds = bounds;
        }

        void message() {
            JsonToken first = next();
            if (first == JsonToken.START_ARRAY) {
                throw new Refused(Problem.invalidRequest("batches are not supported; send one message per request"));
            }
            if (first != JsonToken.START_OBJECT) {
                throw new Refused(Problem.parseError("the body is not a JSON object"));
            }
            for (JsonToken t = next(); t != JsonToken.END_OBJECT; t = next()) {
                String name = parser.currentName();
                JsonToken value = next();
                switch (name) {
                    case "params" -> top.put(name, value == JsonToken.START_OBJECT ? params()
                            : scalar(value, Problem.invalidParams("params must be an object")));
                    case "jsonrpc" -> top.put(name, scalar(value, Problem.invalidRequest("\"jsonrpc\" must be \"2.0\"")));
                    case "id" -> top.put(name, scalar(value, Problem.tooLongInEnvelope("\"id\"", JsonBounds.MAX_ID_CHARS)));
                    case "method" -> top.put(name, scalar(value,
                            Problem.tooLongInEnvelope("\"method\"", JsonBounds.MAX_METHOD_CHARS)));
                    default -> {
                        skip(value);
                        top.put(name, STRUCTURE);
                    }
                }
            }
            if (next() != null) {
                throw new Refused(Problem.parseError("the body holds more than one JSON value"));
            }
        }

        private Map<String, Object> params() {
            Map<String, Object> params = new HashMap<>();
            for (JsonToken t = next(); t != JsonToken.END_OBJECT; t = next()) {
                String name = parser.currentName();
                JsonToken value = next();
                switch (name) {
                    case "name" -> params.put(name, scalar(value, toolNameTooLong(bounds)));
                    case "requestId" -> params.put(name, scalar(value, requestIdTooLong()));
                    case "reason" -> params.put(name, scalar(value,
                            Problem.tooLongInParams("params.reason", JsonBounds.MAX_KEPT_CHARS, "a cancellation's reason")));
                    case "arguments" -> params.put(name, value == JsonToken.START_OBJECT ? skipped(value)
                            : scalar(value, Problem.invalidParams("params.arguments of tools/call must be an object")));
                    case "_meta" -> params.put(name, value == JsonToken.START_OBJECT ? meta() : skipped(value));
                    default -> skip(value);
                }
            }
            return params;
        }

        /** Of params' {@code _meta}, only the progress token. */
        private Map<String, Object> meta() {
            Map<String, Object> meta = new HashMap<>();
            for (JsonToken t = next(); t != JsonToken.END_OBJECT; t = next()) {
                String name = parser.currentName();
                JsonToken value = next();
                if (name.equals("progressToken")) {
                    meta.put(name, scalar(value, progressTokenTooLong()));
                } else {
                    skip(value);
                }
            }
            return meta;
        }

        /** An object skipped, standing in the envelope as an empty map. */
        private Map<String, Object> skipped(JsonToken start) {
            skip(start);
            return Map.of();
        }

        /**
         * The value of a kept field: a scalar (a string read only up to {@link JsonBounds#MAX_KEPT_CHARS};
         * past it, {@code tooLong} is the refusal), or {@link #STRUCTURE}.
         */
        private Object scalar(JsonToken value, Problem tooLong) {
            try {
                return scalar(value);
            } catch (StreamConstraintsException past) {
                throw new Refused(tooLong);
            }
        }

        private Object scalar(JsonToken value) {
            return switch (value) {
                case VALUE_STRING -> parser.getString();
                case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> parser.getNumberValue();
                case VALUE_TRUE -> Boolean.TRUE;
                case VALUE_FALSE -> Boolean.FALSE;
                case VALUE_NULL -> null;
                default -> {
                    skip(value);
                    yield STRUCTURE;
                }
            };
        }

        private void skip(JsonToken value) {
            if (value != JsonToken.START_OBJECT && value != JsonToken.START_ARRAY) {
                return;
            }
            for (int depth = 1; depth > 0; ) {
                JsonToken t = next();
                if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                    depth++;
                } else if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                    depth--;
                }
            }
        }

        /** The next token, counted; null only after the whole value. */
        private JsonToken next() {
            JsonToken t = parser.nextToken();
            if (t == null && parser.streamReadContext().inRoot() && tokens > 0) {
                return null;
            }
            if (t == null) {
                throw new Refused(Problem.parseError("the body is not a JSON object"));
            }
            if (++tokens > bounds.maxTokens()) {
                throw new Refused(Problem.tooManyTokens(bounds.maxTokens()));
            }
            if ((t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY)
                    && parser.streamReadContext().getNestingDepth() > bounds.maxDepth()) {
                throw new Refused(Problem.tooDeep(bounds.maxDepth()));
            }
            return t;
        }
    }
}
