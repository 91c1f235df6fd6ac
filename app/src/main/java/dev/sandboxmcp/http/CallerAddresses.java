package dev.sandboxmcp.http;

import dev.sandboxmcp.config.TrustedProxies;
import dev.sandboxmcp.tools.CallerAddress;
import jakarta.servlet.http.HttpServletRequest;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Records who sent an MCP request, for the audit log: the TCP peer always, and as the client the
 * address the trusted proxies vouch for. {@code X-Forwarded-For} is believed only from a trusted
 * proxy, and only as far as the proxies are trusted: each proxy appends the address it saw, so
 * walking the list from the right past the trusted proxies reaches the first address that no
 * trusted proxy made up. Anything to its left was written by the client and proves nothing.
 */
final class CallerAddresses {

    private final TrustedProxies trusted;

    CallerAddresses(TrustedProxies trusted) {
        this.trusted = trusted;
    }

    CallerAddress of(HttpServletRequest request) {
        String peer = request.getRemoteAddr();
        InetAddress peerAddress = TrustedProxies.address(peer);
        if (peerAddress == null || !trusted.contains(peerAddress)) {
            return new CallerAddress(peer, peer);
        }
        List<String> hops = new ArrayList<>();
        for (String header : Collections.list(request.getHeaders("X-Forwarded-For"))) {
            for (String hop : header.split(",")) {
                if (!hop.isBlank()) {
                    hops.add(hop.strip());
                }
            }
        }
        String client = peer;
        for (String hop : hops.reversed()) {
            InetAddress address = TrustedProxies.address(withoutPort(hop));
            if (address == null) {
                return new CallerAddress("invalid", peer); // not an address: caller-written, never logged
            }
            client = address.getHostAddress();
            if (!trusted.contains(address)) {
                break;
            }
        }
        return new CallerAddress(client, peer);
    }

    /** Some proxies write the port too: {@code 192.0.2.1:4711} or {@code [2001:db8::1]:4711}. */
    private static String withoutPort(String hop) {
        if (hop.startsWith("[")) {
            int close = hop.indexOf(']');
            return close < 0 ? hop : hop.substring(1, close);
        }
        int colon = hop.indexOf(':');
        return colon >= 0 && colon == hop.lastIndexOf(':') ? hop.substring(0, colon) : hop;
    }
}
