package dev.sandboxmcp.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The server's whole configuration, read once from the environment (twelve-factor).
 *
 * @param host           interface to listen on
 * @param port           TCP port to listen on (0 picks a free one)
 * @param basePath       public prefix of every MCP path, "" or "/something" without a trailing slash
 * @param runnerSocket   where the server listens for a runner started separately (the containers;
 *                       the directory is the server's and holds the runner's ticket), or null:
 *                       the server then starts the runner itself, as a child process
 * @param workspace      the directory the tools work in, checked here when the server starts
 *                       the runner itself; null with a separate runner (the server never opens it)
 * @param tokenDigest    SHA-256 of the bearer token clients must send (the server needs no more)
 * @param allowedOrigins browser origins allowed to call (requests without Origin always pass)
 * @param trustedProxies the reverse proxies whose X-Forwarded-For the audit believes
 * @param limits         sizes, timeouts and counts
 * @param toolchains     what the runner's image offers commands ("go 1.24.4, node 20.19.2"), from
 *                       the image's label; "" when not known (a runner on the host)
 */
public record Config(String host, int port, String basePath, Path runnerSocket, Path workspace,
        TokenDigest tokenDigest, List<String> allowedOrigins, TrustedProxies trustedProxies, Limits limits,
        String toolchains) {

    public static final int MIN_TOKEN_LENGTH = 32;
    /** Environment variables that hold the secret; they are never passed on to commands. */
    public static final List<String> SECRET_VARIABLES =
            List.of("MCP_AUTH_TOKEN", "MCP_AUTH_TOKEN_FILE", "MCP_AUTH_TOKEN_SHA256");

    private static final Pattern BASE_PATH = Pattern.compile("(/[A-Za-z0-9._~-]+)*");
    private static final Pattern TOKEN_CHARACTERS = Pattern.compile("[\\x21-\\x7E]+");
    private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-fA-F]{64}");
    private static final Pattern TOOLCHAINS = Pattern.compile("[\\x20-\\x7E]{0,512}");

    @Override
    public String toString() {
        return "Config[host=" + host + ", port=" + port + ", basePath=" + basePath + ", runnerSocket=" + runnerSocket
                + ", workspace=" + workspace + ", token=(digest only), allowedOrigins=" + allowedOrigins
                + ", trustedProxies=" + trustedProxies + ", limits=" + limits + ", toolchains=" + toolchains + "]";
    }

    /** Reads the configuration from {@code env}, the process environment or a test's map. */
    public static Config fromEnvironment(Map<String, String> env) throws ConfigException {
        EnvReader reader = new EnvReader(env);
        HostPort address = HostPort.parse(reader.string("MCP_ADDR", "127.0.0.1:8000"));
        String basePath = basePath(reader.string("MCP_BASE_PATH", "/mcp-sandbox"));
        Path runnerSocket = reader.path("MCP_RUNNER_SOCKET");
        Path workspace = runnerSocket != null ? null : workspace(reader.string("MCP_WORKSPACE", "/workspace"));
        TokenDigest token = token(env);
        List<String> origins = Arrays.stream(reader.string("MCP_ALLOWED_ORIGINS", "").split(","))
                .map(String::strip).filter(s -> !s.isEmpty()).toList();
        TrustedProxies proxies = TrustedProxies.parse(reader.string("MCP_TRUSTED_PROXIES", TrustedProxies.DEFAULT));

        String toolchains = reader.string("MCP_TOOLCHAINS", "").strip();
        if (!TOOLCHAINS.matcher(toolchains).matches()) {
            throw new ConfigException("MCP_TOOLCHAINS must be at most 512 printable ASCII characters "
                    + "(it is the runner image's toolchain label)");
        }
        return new Config(address.host(), address.port(), basePath, runnerSocket, workspace, token, origins, proxies,
                limits(reader), toolchains);
    }

    /** The bounds, from the variables both the server and the runner read. */
    static Limits limits(EnvReader reader) throws ConfigException {
        Limits defaults = Limits.defaults();
        Duration maxTimeout = reader.seconds("MCP_COMMAND_TIMEOUT_MAX_SECONDS", defaults.maxTimeout(), 1, 3600);
        Duration defaultTimeout = reader.seconds("MCP_COMMAND_TIMEOUT_SECONDS", defaults.defaultTimeout(), 1, 3600);
        if (defaultTimeout.compareTo(maxTimeout) > 0) {
            throw new ConfigException("MCP_COMMAND_TIMEOUT_SECONDS (" + defaultTimeout.toSeconds()
                    + ") is larger than MCP_COMMAND_TIMEOUT_MAX_SECONDS (" + maxTimeout.toSeconds() + ")");
        }
        int outputCap = reader.integer("MCP_OUTPUT_LIMIT_BYTES", defaults.outputCapBytes(), 1024, 64 * 1024 * 1024);
        Limits limits = new Limits(
                defaultTimeout,
                maxTimeout,
                reader.millis("MCP_KILL_GRACE_MILLIS", defaults.killGrace(), 0, 60_000),
                outputCap,
                reader.integer("MCP_FILE_LIMIT_BYTES", defaults.fileMaxBytes(), 1024, 64 * 1024 * 1024),
                reader.integer("MCP_MAX_CONCURRENT_COMMANDS", defaults.maxConcurrentCommands(), 1, 1024),
                reader.integer("MCP_MAX_REQUEST_BYTES", defaults.maxRequestBytes(), 64 * 1024, 512 * 1024 * 1024),
                reader.seconds("MCP_KEEPALIVE_SECONDS", defaults.keepAlive(), 1, 3600),
                reader.integer("MCP_MAX_JOBS", defaults.maxJobs(), 1, 64),
                reader.seconds("MCP_IDLE_TIMEOUT_SECONDS", defaults.idleTimeout(), 1, 3600),
                defaults.requestHeadTimeout(),
                defaults.requestBodyGrace(),
                defaults.bodyBudgetWait(),
                defaults.minRequestBytesPerSecond(),
                reader.integer("MCP_MAX_CONNECTIONS", defaults.maxConnections(), 1, 65536),
                reader.seconds("MCP_CALL_BUDGET_SECONDS", defaults.callBudget(), 1, 3600),
                reader.integer("MCP_OUTPUT_VIEW_BYTES", Math.min(defaults.outputViewBytes(), outputCap), 1024, outputCap),
                defaults.pageBytes(),
                defaults.pageLines(),
                defaults.keptOutputs(),
                defaults.jobLogBytes(),
                defaults.progressInterval(),
                defaults.readLinesMax(),
                defaults.listEntries(),
                defaults.diffChars(),
                defaults.jobInputBytes());
        return limits;
    }

    /**
     * The variables that make {@link #limits(EnvReader)} read back {@code limits}: how the server
     * hands its bounds to a runner it starts itself (the HTTP-only bounds stay with the server).
     */
    public static Map<String, String> environmentOf(Limits limits) {
        return Map.ofEntries(
                Map.entry("MCP_COMMAND_TIMEOUT_MAX_SECONDS", Long.toString(limits.maxTimeout().toSeconds())),
                Map.entry("MCP_COMMAND_TIMEOUT_SECONDS", Long.toString(limits.defaultTimeout().toSeconds())),
                Map.entry("MCP_KILL_GRACE_MILLIS", Long.toString(limits.killGrace().toMillis())),
                Map.entry("MCP_OUTPUT_LIMIT_BYTES", Integer.toString(limits.outputCapBytes())),
                Map.entry("MCP_FILE_LIMIT_BYTES", Integer.toString(limits.fileMaxBytes())),
                Map.entry("MCP_MAX_CONCURRENT_COMMANDS", Integer.toString(limits.maxConcurrentCommands())),
                Map.entry("MCP_MAX_REQUEST_BYTES", Integer.toString(limits.maxRequestBytes())),
                Map.entry("MCP_KEEPALIVE_SECONDS", Long.toString(limits.keepAlive().toSeconds())),
                Map.entry("MCP_MAX_JOBS", Integer.toString(limits.maxJobs())),
                Map.entry("MCP_CALL_BUDGET_SECONDS", Long.toString(limits.callBudget().toSeconds())),
                Map.entry("MCP_OUTPUT_VIEW_BYTES", Integer.toString(limits.outputViewBytes())));
    }

    /** The MCP path for {@code suffix} ("/mcp", "/sse", ...) under the base path. */
    public String path(String suffix) {
        return basePath + suffix;
    }

    private static String basePath(String raw) throws ConfigException {
        String value = raw.strip();
        while (value.endsWith("/")) {
            value = value.substring(0, value.length() - 1);
        }
        if (!value.isEmpty() && !value.startsWith("/")) {
            value = "/" + value;
        }
        if (!BASE_PATH.matcher(value).matches()) {
            throw new ConfigException("MCP_BASE_PATH must be a URL path such as /mcp-sandbox (letters, digits, . _ ~ -), got '"
                    + raw + "'");
        }
        return value;
    }

    static Path workspace(String raw) throws ConfigException {
        Path path = Path.of(raw).toAbsolutePath().normalize();
        if (!Files.exists(path)) {
            throw new ConfigException("MCP_WORKSPACE " + path
                    + " does not exist; create it or point MCP_WORKSPACE at your development directory");
        }
        if (!Files.isDirectory(path)) {
            throw new ConfigException("MCP_WORKSPACE " + path + " is not a directory");
        }
        return path;
    }

    private static TokenDigest token(Map<String, String> env) throws ConfigException {
        String inline = env.get("MCP_AUTH_TOKEN");
        String file = env.get("MCP_AUTH_TOKEN_FILE");
        String digest = env.get("MCP_AUTH_TOKEN_SHA256");
        boolean hasInline = inline != null && !inline.isEmpty();
        boolean hasFile = file != null && !file.isEmpty();
        boolean hasDigest = digest != null && !digest.isEmpty();
        if ((hasInline ? 1 : 0) + (hasFile ? 1 : 0) + (hasDigest ? 1 : 0) > 1) {
            throw new ConfigException("set only one of MCP_AUTH_TOKEN, MCP_AUTH_TOKEN_FILE and MCP_AUTH_TOKEN_SHA256");
        }
        if (hasDigest) {
            if (!SHA256_HEX.matcher(digest.strip()).matches()) {
                throw new ConfigException("MCP_AUTH_TOKEN_SHA256 must be 64 hexadecimal digits (sha256sum of the token)");
            }
            return TokenDigest.ofHex(digest.strip());
        }
        String token;
        if (hasFile) {
            try {
                token = Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new ConfigException("MCP_AUTH_TOKEN_FILE " + file + " cannot be read: " + e.getClass().getSimpleName());
            }
        } else if (hasInline) {
            token = inline;
        } else {
            throw new ConfigException("MCP_AUTH_TOKEN (or MCP_AUTH_TOKEN_FILE or MCP_AUTH_TOKEN_SHA256) is required: "
                    + "a random secret of at least " + MIN_TOKEN_LENGTH + " characters, e.g. from make token");
        }
        String source = hasFile ? "the token in MCP_AUTH_TOKEN_FILE" : "MCP_AUTH_TOKEN";
        if (token.length() < MIN_TOKEN_LENGTH) {
            throw new ConfigException(source + " is " + token.length() + " characters; at least " + MIN_TOKEN_LENGTH
                    + " are required");
        }
        if (!TOKEN_CHARACTERS.matcher(token).matches()) {
            throw new ConfigException(source + " may hold only printable ASCII without spaces");
        }
        return TokenDigest.of(token);
    }

    private record HostPort(String host, int port) {
        static HostPort parse(String raw) throws ConfigException {
            int colon = raw.lastIndexOf(':');
            if (colon < 0) {
                throw new ConfigException("MCP_ADDR must be host:port or :port, got '" + raw + "'");
            }
            String host = raw.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(raw.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new ConfigException("MCP_ADDR must be host:port or :port, got '" + raw + "'");
            }
            if (port < 0 || port > 65535) {
                throw new ConfigException("MCP_ADDR port must be from 0 to 65535, got " + port);
            }
            return new HostPort(host.isEmpty() ? "0.0.0.0" : host, port);
        }
    }

    record EnvReader(Map<String, String> env) {
        String string(String name, String fallback) {
            String value = env.get(name);
            return value == null || value.isBlank() ? fallback : value.strip();
        }

        /** An absolute path, or null when the variable is unset. */
        Path path(String name) throws ConfigException {
            String value = string(name, null);
            if (value == null) {
                return null;
            }
            if (!value.startsWith("/")) {
                throw new ConfigException(name + " must be an absolute path, got '" + value + "'");
            }
            return Path.of(value);
        }

        boolean flag(String name) throws ConfigException {
            String value = string(name, "false");
            if (!value.equals("true") && !value.equals("false")) {
                throw new ConfigException(name + " must be true or false, got '" + value + "'");
            }
            return value.equals("true");
        }

        int integer(String name, int fallback, int min, int max) throws ConfigException {
            String value = env.get(name);
            if (value == null || value.isBlank()) {
                return fallback;
            }
            try {
                int parsed = Integer.parseInt(value.strip());
                if (parsed >= min && parsed <= max) {
                    return parsed;
                }
            } catch (NumberFormatException ignored) {
                // reported below
            }
            throw new ConfigException(name + " must be a whole number from " + min + " to " + max + ", got '" + value + "'");
        }

        Duration seconds(String name, Duration fallback, int min, int max) throws ConfigException {
            return Duration.ofSeconds(integer(name, (int) fallback.toSeconds(), min, max));
        }

        Duration millis(String name, Duration fallback, int min, int max) throws ConfigException {
            return Duration.ofMillis(integer(name, (int) fallback.toMillis(), min, max));
        }
    }
}
