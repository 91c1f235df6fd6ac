package dev.sandboxmcp.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Traefik in front of the containers, as production has it: the pinned binary of
 * infra/traefik/install.sh as a host process, an HTTPS entry point on loopback with the example's
 * timeouts, and the route infra/traefik/render.sh writes for {@code localhost}. What a round
 * trip through it costs over the direct one is the front door's share (TLS included: Funnel
 * reaches Traefik over HTTPS too).
 */
final class FrontDoor implements AutoCloseable {

    final String mcpUrl;
    private final Process process;
    private final TempTree dir;

    private FrontDoor(String mcpUrl, Process process, TempTree dir) {
        this.mcpUrl = mcpUrl;
        this.process = process;
        this.dir = dir;
    }

    static FrontDoor start(Path root, int serverPort, String basePath) throws Exception {
        List<String> install = Processes.run(List.of(root.resolve("infra/traefik/install.sh").toString())).lines().toList();
        Path binary = Path.of(install.getLast());
        TempTree dir = TempTree.create("sandbox-mcp-bench-traefik-");
        Path dynamic = Files.createDirectories(dir.resolve("dynamic"));
        String route = Processes.run(List.of("env", "SANDBOX_PORT=" + serverPort,
                root.resolve("infra/traefik/render.sh").toString(), "localhost"));
        Files.writeString(dynamic.resolve("sandbox-mcp.yml"), route + "\n");
        int https = Processes.freePort();
        int ping = Processes.freePort();
        Files.writeString(dir.resolve("traefik.yml"), """
                global: {checkNewVersion: false, sendAnonymousUsage: false}
                entryPoints:
                  websecure:
                    address: "127.0.0.1:%d"
                    transport: {respondingTimeouts: {readTimeout: 0s, writeTimeout: 0s, idleTimeout: 180s}}
                  ping: {address: "127.0.0.1:%d"}
                providers: {file: {directory: "%s", watch: false}}
                ping: {entryPoint: ping}
                log: {level: ERROR}
                """.formatted(https, ping, dynamic));
        Process process = Processes.start(List.of(binary.toString(), "--configFile=" + dir.resolve("traefik.yml")),
                Map.of(), dir.resolve("traefik.log"));
        FrontDoor door = new FrontDoor("https://localhost:" + https + basePath + "/mcp", process, dir);
        try {
            Processes.millisUntilAnswers(System.nanoTime(), () -> Processes.healthy("http://127.0.0.1:" + ping + "/ping"),
                    Duration.ofSeconds(30));
            // Traefik answers its ping before its file provider has loaded the route: until then
            // it answers 404 itself. With the route, the server answers (401: no token here).
            Processes.millisUntilAnswers(System.nanoTime(), () -> routed(door.mcpUrl), Duration.ofSeconds(30));
            return door;
        } catch (Exception e) {
            String log = Files.readString(dir.resolve("traefik.log"));
            door.close();
            throw new IllegalStateException("Traefik did not start: " + log, e);
        }
    }

    private static boolean routed(String url) {
        try (PlainHttp http = new PlainHttp(url)) {
            return http.post(Map.of(), "{}").status() != 404;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        dir.close();
    }
}
