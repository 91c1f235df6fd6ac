package dev.sandboxmcp.config;

import java.nio.file.Path;
import java.util.Map;

/**
 * The runner's configuration, read once from the environment: only what is the runner's own.
 * It needs no token and is given none, and it has no limits to read: the server states them in
 * its welcome when the runner connects ({@link Limits#fromValues}).
 *
 * @param socket      the server's socket, to connect to; the ticket and lock lie beside it
 * @param workspace   the directory the tools work in
 * @param sweepAll    after a command, with no other command or job running, kill every process
 *                    of this user but the runner and what {@code docker exec} entered: only ever
 *                    true in the runner's own container, where everything of that user is the
 *                    runner's or an operator's
 * @param parentPipe  the runner is the server's child: its secret is the first line of standard
 *                    input, and it exits at that input's end
 */
public record RunnerConfig(Path socket, Path workspace, boolean sweepAll, boolean parentPipe) {

    public static RunnerConfig fromEnvironment(Map<String, String> env) throws ConfigException {
        Config.EnvReader reader = new Config.EnvReader(env);
        Path socket = reader.path("MCP_RUNNER_SOCKET");
        if (socket == null) {
            throw new ConfigException("MCP_RUNNER_SOCKET is required in runner mode: the server's socket to connect to");
        }
        return new RunnerConfig(socket, Config.workspace(reader.string("MCP_WORKSPACE", "/workspace")),
                reader.flag("MCP_RUNNER_SWEEP_ALL"), reader.flag("MCP_RUNNER_PARENT_PIPE"));
    }
}
