package dev.sandboxmcp.bench;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

/**
 * The channel's cost, through HTTP: {@code read_file} of 4 KiB and {@code run_command true}
 * (jar, one plain keep-alive HTTP/1.1 client, one call at a time), next to {@code /bin/sh -lc
 * true} started here. {@code make bench-channel} prints it.
 */
public final class ChannelCosts {

    private static final int CALLS = 400;

    private ChannelCosts() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Path root = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath().normalize();
        Path temp = Files.createTempDirectory("sandbox-mcp-channel-");
        Path workspace = Files.createDirectories(temp.resolve("workspace"));
        Files.writeString(workspace.resolve("four.txt"), "x".repeat(4095) + "\n");
        try (OurJar ours = OurJar.start(root, workspace, temp.resolve("ours.log"));
                PlainHttp http = new PlainHttp(ours.mcpUrl())) {
            Map<String, String> headers = Map.of("Authorization", "Bearer " + ours.token());
            String read = call("read_file", "{\"path\":\"four.txt\"}");
            String command = call("run_command", "{\"command\":\"true\"}");
            double readP50 = p50(http, headers, read, "four.txt");
            double commandP50 = p50(http, headers, command, "\"exit_code\":0");
            long[] shell = new long[CALLS];
            for (int i = 0; i < CALLS; i++) {
                long started = System.nanoTime();
                Process p = new ProcessBuilder("/bin/sh", "-lc", "true").directory(workspace.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
                p.getInputStream().readAllBytes();
                p.waitFor();
                shell[i] = System.nanoTime() - started;
            }
            double shellP50 = median(shell);
            System.out.printf(Locale.ROOT, "| read_file 4 KiB (HTTP) | %.2f |%n| run_command true (HTTP) | %.2f |%n"
                    + "| /bin/sh -lc true | %.2f |%n| run_command true above the shell | %.2f |%n",
                    readP50, commandP50, shellP50, commandP50 - shellP50);
        }
        System.exit(0);
    }

    private static String call(String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
    }

    private static double p50(PlainHttp http, Map<String, String> headers, String json, String expect) throws Exception {
        for (int i = 0; i < 200; i++) {
            http.post(headers, json);
        }
        long[] took = new long[CALLS];
        for (int i = 0; i < CALLS; i++) {
            long started = System.nanoTime();
            PlainHttp.Response response = http.post(headers, json);
            took[i] = System.nanoTime() - started;
            if (response.status() != 200 || !response.body().contains(expect)) {
                throw new IllegalStateException("call failed: " + response.body());
            }
        }
        return median(took);
    }

    private static double median(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2] / 1e6;
    }
}
