package dev.sandboxmcp.tools;

/**
 * Progress of a long call, sent as MCP progress notifications where the transport has a stream
 * to carry them (SSE) and the caller asked for them (a progress token); a no-op elsewhere.
 */
@FunctionalInterface
public interface Progress {

    Progress NONE = (done, total, message) -> {
    };

    void report(double done, Double total, String message);
}
