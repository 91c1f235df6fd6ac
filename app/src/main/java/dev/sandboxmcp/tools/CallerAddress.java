package dev.sandboxmcp.tools;

/**
 * Who made a call: {@code client} is the first X-Forwarded-For hop when a proxy supplied one,
 * else the TCP peer; {@code peer} is always the TCP peer.
 */
public record CallerAddress(String client, String peer) {
    public static final CallerAddress UNKNOWN = new CallerAddress("unknown", "unknown");
}
