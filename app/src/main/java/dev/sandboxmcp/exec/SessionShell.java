package dev.sandboxmcp.exec;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/**
 * Starts {@code /bin/sh -lc <command>} as the leader of a session of its own, first in line for
 * the OOM killer, with exactly the given environment plus a marker that {@link ProcessTree} uses
 * to find everything it starts.
 */
final class SessionShell {

    /**
     * Makes the command, and everything it starts, the first the kernel's OOM killer picks
     * (raising one's own score needs no privilege), then runs it in a login shell ($0 is the
     * command, passed as its own argument, untouched).
     */
    private static final String OOM_FIRST = "echo 1000 >/proc/self/oom_score_adj 2>/dev/null; exec /bin/sh -lc \"$0\"";

    /** Name of the environment entry that marks every process of one command. */
    static final String MARKER_VARIABLE = "SANDBOX_MCP_RUN";

    /** A started shell and the tree that finds and kills all of its processes. */
    record Started(Process process, ProcessTree tree) {
    }

    private SessionShell() {
    }

    /**
     * @param pipeStdin   give the command a pipe to write to (else stdin is at end of file)
     * @param mergeStderr send stderr into the stdout stream
     */
    static Started start(String command, Path workingDirectory, Map<String, String> environment, boolean pipeStdin,
            boolean mergeStderr) throws IOException {
        String marker = UUID.randomUUID().toString();
        ProcessBuilder builder = new ProcessBuilder("setsid", "/bin/sh", "-c", OOM_FIRST, command)
                .directory(workingDirectory.toFile())
                .redirectInput(pipeStdin ? ProcessBuilder.Redirect.PIPE : ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(mergeStderr);
        builder.environment().clear();
        builder.environment().putAll(environment);
        builder.environment().put(MARKER_VARIABLE, marker);
        Process process = builder.start();
        return new Started(process, new ProcessTree(process.pid(), MARKER_VARIABLE + "=" + marker));
    }
}
