package dev.sandboxmcp.bench;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.tools.Progress;
import dev.sandboxmcp.tools.ToolExecutor;
import dev.sandboxmcp.tools.ToolResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/** The channel's cost without HTTP: read_file 4 KiB and run_command true through the server's end of the channel. */
public final class AtRunner {

    private AtRunner() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        Path workspace = Files.createDirectories(Files.createTempDirectory("sandbox-mcp-atrunner-").resolve("ws"));
        Files.writeString(workspace.resolve("four.txt"), "x".repeat(4095) + "\n");
        Map<String, String> env = new HashMap<>(Map.of("PATH", System.getenv("PATH"), "HOME", System.getenv("HOME")));
        dev.sandboxmcp.runner.Bounds bounds = new dev.sandboxmcp.runner.Bounds(16 << 20, 200_000, 64, 16 << 20);
        dev.sandboxmcp.runner.RunnerLink executor = new dev.sandboxmcp.runner.RunnerLink(bounds,
                (tool, arguments) -> Duration.ofSeconds(60));
        dev.sandboxmcp.runner.ChildRunner child = dev.sandboxmcp.runner.ChildRunner.start(env, workspace, executor, bounds,
                Limits.defaults(), Duration.ofSeconds(60));
        double read = p50(executor, "read_file", Map.of("path", "four.txt"));
        double command = p50(executor, "run_command", Map.of("command", "true"));
        System.out.printf(Locale.ROOT, "| read_file 4 KiB (at the runner) | %.3f |%n| run_command true (at the runner) | %.3f |%n",
                read, command);
        child.close();
        System.exit(0);
    }

    static double p50(ToolExecutor executor, String tool, Map<String, Object> arguments) {
        for (int i = 0; i < 300; i++) {
            executor.execute(tool, arguments, Progress.NONE);
        }
        long[] took = new long[500];
        for (int i = 0; i < took.length; i++) {
            long started = System.nanoTime();
            ToolResponse response = executor.execute(tool, arguments, Progress.NONE);
            took[i] = System.nanoTime() - started;
            if (response.error()) {
                throw new IllegalStateException(response.text());
            }
        }
        Arrays.sort(took);
        return took[took.length / 2] / 1e6;
    }
}
