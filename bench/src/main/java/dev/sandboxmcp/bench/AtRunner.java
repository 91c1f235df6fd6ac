package dev.sandboxmcp.bench;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.runner.Bounds;
import dev.sandboxmcp.runner.ChildRunner;
import dev.sandboxmcp.runner.RunnerLink;
import dev.sandboxmcp.tools.Progress;
import dev.sandboxmcp.tools.ToolResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The runner without HTTP: this JVM as the server's end of the channel ({@link RunnerLink}), the
 * runner its child process on {@code workspace}, as the jar runs it. A call through it costs
 * what the channel and the runner cost, none of HTTP, MCP or the dispatcher.
 */
final class AtRunner implements AutoCloseable {

    private final RunnerLink link;
    private final ChildRunner child;

    private AtRunner(RunnerLink link, ChildRunner child) {
        this.link = link;
        this.child = child;
    }

    static AtRunner start(Path workspace) throws Exception {
        // What the jar's commands get from the bench (OurJar inherits it) and the shell beside them too:
        // a login shell's profile costs more or less with what the environment holds.
        Map<String, String> environment = System.getenv();
        Bounds bounds = new Bounds(16 << 20, 200_000, 64, 16 << 20);
        RunnerLink link = new RunnerLink(bounds, (tool, arguments) -> Duration.ofSeconds(60));
        return new AtRunner(link, ChildRunner.start(environment, workspace, link, bounds, Limits.defaults(),
                Duration.ofSeconds(60)));
    }

    /** One call; a tool error is a failure of the benchmark. */
    ToolResponse call(String tool, Map<String, Object> arguments) {
        ToolResponse response = link.execute(tool, arguments, Progress.NONE);
        if (response.error()) {
            throw new IllegalStateException(tool + " " + arguments + " failed at the runner: " + response.text());
        }
        return response;
    }

    @Override
    public void close() {
        child.close();
    }
}
