package dev.sandboxmcp.http;

import org.eclipse.jetty.http.HttpStatus;
import tools.jackson.core.StreamReadConstraints;

/**
 * Why a request is refused, as the client is told: the HTTP status, the JSON-RPC error code and a
 * message that names what was refused and the limit it passed. Built from facts (limits, counts),
 * never from an exception's text; {@link JsonRpcErrors} writes every one.
 */
record Problem(int status, int code, String message) {

    static Problem parseError(String message) {
        return new Problem(400, JsonRpcErrors.PARSE_ERROR, message);
    }

    static Problem invalidRequest(String message) {
        return new Problem(400, JsonRpcErrors.INVALID_REQUEST, message);
    }

    static Problem invalidParams(String message) {
        return new Problem(400, JsonRpcErrors.INVALID_PARAMS, message);
    }

    static Problem unauthorized() {
        return new Problem(401, JsonRpcErrors.INVALID_REQUEST,
                "unauthorized: send exactly one \"Authorization: Bearer <token>\" header with the server's token");
    }

    static Problem forbiddenOrigin() {
        return new Problem(403, JsonRpcErrors.INVALID_REQUEST,
                "forbidden: the Origin header is not one of the allowed origins (MCP_ALLOWED_ORIGINS)");
    }

    static Problem tooLarge(int maxBytes) {
        return new Problem(413, JsonRpcErrors.INVALID_REQUEST,
                "the request body is larger than the limit of " + maxBytes + " bytes (MCP_MAX_REQUEST_BYTES)");
    }

    static Problem tooDeep(int maxDepth) {
        return invalidRequest("the message nests arrays and objects deeper than the limit of " + maxDepth + " levels");
    }

    static Problem tooManyTokens(int maxTokens) {
        return invalidRequest("the message has more JSON values than the limit of " + maxTokens
                + " tokens (one per 64 bytes of MCP_MAX_REQUEST_BYTES)");
    }

    static Problem tooLong(JsonBounds bounds) {
        return invalidRequest("a string, name or number in the message is longer than allowed (strings up to "
                + bounds.maxBytes() + " bytes, names up to " + StreamReadConstraints.DEFAULT_MAX_NAME_LEN
                + " characters, numbers up to " + StreamReadConstraints.DEFAULT_MAX_NUM_LEN + " digits)");
    }

    /**
     * An envelope string longer than its bound ({@link JsonBounds}): kept, echoed and logged after
     * the parse, so bounded apart from the body.
     */
    static Problem tooLongInEnvelope(String field, int maxChars) {
        return invalidRequest(field + " is longer than the limit of " + maxChars + " characters");
    }

    /** A string of params longer than its bound ({@link JsonBounds}), {@code what} the bound is. */
    static Problem tooLongInParams(String field, int maxChars, String what) {
        return invalidParams(field + " is longer than the limit of " + maxChars + " characters (" + what + ")");
    }

    static Problem tooCostly(long cost, long budget) {
        return new Problem(413, JsonRpcErrors.INVALID_REQUEST, "the message would take about " + cost
                + " bytes of heap while handled, more than the whole budget for bodies of " + budget
                + " bytes (half the server's heap); send it in smaller parts");
    }

    /**
     * A request Jetty's parser refused before any filter saw it, with {@code status} and Jetty's
     * {@code reason} (its first line, at most 120 characters: the parser's words, which may quote
     * a byte it saw).
     */
    static Problem refusedByParser(int status, String reason, int maxHeaderBytes) {
        String said = reason == null || reason.isBlank() ? HttpStatus.getMessage(status)
                : reason.lines().findFirst().orElse("").strip();
        said = said.length() <= 120 ? said : said.substring(0, 120) + "...";
        String what = switch (status) {
            case 431 -> "the request's headers are larger than the limit of " + maxHeaderBytes + " bytes";
            case 414 -> "the request's URI is too long (a request's head may be at most " + maxHeaderBytes + " bytes)";
            case 400 -> "the request is not one well-formed HTTP/1.1 request (CRLF line ends; a body framed by one "
                    + "Content-Length, or by Transfer-Encoding: chunked alone)";
            default -> "the request was refused";
        };
        return new Problem(status, status >= 500 ? JsonRpcErrors.INTERNAL_ERROR : JsonRpcErrors.INVALID_REQUEST,
                what + "; the HTTP parser said: " + said + " (" + status + ")");
    }

    /**
     * A well-formed request refused past the parser, by a servlet's {@code sendError} or by
     * Jetty finding nothing to serve it ({@code OPTIONS *}): the status alone, never the reason
     * given with it.
     */
    static Problem refusedPastParser(int status) {
        return new Problem(status, status >= 500 ? JsonRpcErrors.INTERNAL_ERROR : JsonRpcErrors.INVALID_REQUEST,
                "the server refused the request: " + HttpStatus.getMessage(status) + " (" + status + ")");
    }

    /** No endpoint answers {@code method} at {@code path} ({@code status} 404 or 405); names the ones that do. */
    static Problem noEndpoint(int status, String method, String path, String streamable, String sse) {
        String shown = path.length() <= 200 ? path : path.substring(0, 200) + "...";
        return new Problem(status, JsonRpcErrors.INVALID_REQUEST, "no endpoint answers " + method + " " + shown
                + "; MCP is at " + streamable + " (Streamable HTTP, POST) and " + sse + " (HTTP+SSE)");
    }

    /** TRACE or OPTIONS, refused on every path. */
    static Problem methodNotAnswered(String method) {
        return new Problem(405, JsonRpcErrors.INVALID_REQUEST, method + " is not answered by this server; MCP clients "
                + "use POST and GET");
    }

    static Problem tooManyConnections(int max) {
        return new Problem(503, JsonRpcErrors.INTERNAL_ERROR, "too many connections: " + max
                + " are open, the most allowed (MCP_MAX_CONNECTIONS); retry shortly");
    }

    static Problem busy(long budget) {
        return new Problem(503, JsonRpcErrors.INTERNAL_ERROR, "the server is busy with other large messages (the "
                + "budget for bodies in flight is " + budget + " bytes of heap); retry in a few seconds");
    }
}
