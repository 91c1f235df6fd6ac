package dev.sandboxmcp.http;

/** What is wrong with a message, as the JSON-RPC error that tells the client: its code and its message. */
record Problem(int code, String message) {

    static Problem parseError(String message) {
        return new Problem(JsonRpcErrors.PARSE_ERROR, message);
    }

    static Problem invalidRequest(String message) {
        return new Problem(JsonRpcErrors.INVALID_REQUEST, message);
    }

    static Problem invalidParams(String message) {
        return new Problem(JsonRpcErrors.INVALID_PARAMS, message);
    }

    static Problem internalError(String message) {
        return new Problem(JsonRpcErrors.INTERNAL_ERROR, message);
    }
}
