package dev.sandboxmcp.tools;

/**
 * Who made a call: {@code peer} is always the TCP peer; {@code client} is the address the
 * trusted proxies vouch for (the right-most X-Forwarded-For hop that is not one of them) when
 * the peer is a trusted proxy, else the peer too.
 */
public record CallerAddress(String client, String peer) {
    public static final CallerAddress UNKNOWN = new CallerAddress("unknown", "unknown");
}
