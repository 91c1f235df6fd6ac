package dev.sandboxmcp.config;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The reverse proxies in front of the server, whose {@code X-Forwarded-For} it believes: a list
 * of addresses and CIDR blocks, IPv4 or IPv6. An address given as IPv4-mapped IPv6
 * ({@code ::ffff:10.0.0.1}) is the IPv4 address.
 */
public final class TrustedProxies {

    /** Loopback: a proxy on the same host (or in the same network namespace). */
    public static final String DEFAULT = "127.0.0.0/8,::1";

    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");

    private record Block(byte[] network, int prefix) {
        boolean contains(byte[] address) {
            if (address.length != network.length) {
                return false;
            }
            for (int bit = 0; bit < prefix; bit += 8) {
                int mask = 0xFF << Math.max(0, 8 - (prefix - bit)) & 0xFF;
                if ((address[bit / 8] & mask) != (network[bit / 8] & mask)) {
                    return false;
                }
            }
            return true;
        }
    }

    private final List<Block> blocks;
    private final String text;

    private TrustedProxies(List<Block> blocks, String text) {
        this.blocks = List.copyOf(blocks);
        this.text = text;
    }

    /** Parses {@code MCP_TRUSTED_PROXIES}: comma-separated addresses and CIDR blocks, or {@code none}. */
    public static TrustedProxies parse(String spec) throws ConfigException {
        List<Block> blocks = new ArrayList<>();
        if (!spec.strip().equals("none")) {
            for (String item : spec.split(",")) {
                if (!item.isBlank()) {
                    blocks.add(block(item.strip()));
                }
            }
        }
        return new TrustedProxies(blocks, spec.strip());
    }

    private static Block block(String item) throws ConfigException {
        int slash = item.indexOf('/');
        InetAddress address = address(slash < 0 ? item : item.substring(0, slash));
        int bits = address == null ? 0 : address.getAddress().length * 8;
        int prefix = bits;
        if (address != null && slash >= 0) {
            String length = item.substring(slash + 1);
            prefix = length.matches("\\d{1,3}") ? Integer.parseInt(length) : -1;
        }
        if (address == null || prefix < 0 || prefix > bits) {
            throw new ConfigException("MCP_TRUSTED_PROXIES must be comma-separated IP addresses or CIDR blocks "
                    + "(such as 172.17.0.1 or 10.0.0.0/8), or none; '" + item + "' is neither");
        }
        return new Block(address.getAddress(), prefix);
    }

    /**
     * The address written as {@code text}, an IPv4 or IPv6 literal (never a host name: nothing is
     * looked up), or null when it is not one.
     */
    public static InetAddress address(String text) {
        if (!IPV4.matcher(text).matches() && !IPV6.matcher(text).matches()) {
            return null;
        }
        try {
            return InetAddress.ofLiteral(text);
        } catch (IllegalArgumentException notAnAddress) {
            return null;
        }
    }

    public boolean contains(InetAddress address) {
        byte[] bytes = address.getAddress();
        return blocks.stream().anyMatch(block -> block.contains(bytes));
    }

    @Override
    public String toString() {
        return text;
    }
}
