package dev.sandboxmcp.exec;

import dev.sandboxmcp.config.Limits;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Starts {@code /bin/sh -lc <command>} as the leader of a session of its own, first in line for
 * the OOM killer, with exactly the given environment plus a marker that {@link ProcessTree} uses
 * to find everything it starts. One program is executed: the login shell itself, spawned in its
 * new session by {@link PosixSpawn} (or, where that is unavailable, through {@code setsid(1)}),
 * except for a command within a few dozen bytes of the kernel's limit on one argument.
 */
final class SessionShell {

    /**
     * Put before the command, on its first line (so line numbers in the shell's messages stay the
     * command's own): makes the shell, and everything the command starts, the first the kernel's
     * OOM killer picks (raising one's own score needs no privilege). It runs after the login
     * profile and before the command; it leaves {@code $?} at 0 even where /proc is read-only.
     */
    static final String OOM_FIRST = "echo 1000 2>/dev/null >/proc/self/oom_score_adj || :; ";

    /**
     * For a command too long to carry {@link #OOM_FIRST} within the kernel's limit on one argument:
     * a plain shell raises the score, then executes the login shell with the command, passed as an
     * argument of its own ({@code $0}), untouched. One program more, for the rare giant command.
     */
    static final String OOM_THEN_LOGIN_SHELL = "echo 1000 2>/dev/null >/proc/self/oom_score_adj; exec /bin/sh -lc \"$0\"";

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
        Map<String, String> marked = new HashMap<>(environment);
        marked.put(MARKER_VARIABLE, marker);
        List<String> shell = argv(command);
        Process process = PosixSpawn.available()
                ? SpawnedProcess.start(shell, workingDirectory, marked, pipeStdin, mergeStderr)
                : startWithSetsid(shell, workingDirectory, marked, pipeStdin, mergeStderr);
        return new Started(process, new ProcessTree(process.pid(), MARKER_VARIABLE + "=" + marker));
    }

    /** The shell's arguments: the login shell itself, unless the command is too long to share its argument. */
    static List<String> argv(String command) {
        String inline = OOM_FIRST + command;
        if (inline.getBytes(StandardCharsets.UTF_8).length < Limits.COMMAND_BYTES) {
            return List.of("/bin/sh", "-lc", inline);
        }
        return List.of("/bin/sh", "-c", OOM_THEN_LOGIN_SHELL, command);
    }

    static Process startWithSetsid(List<String> shell, Path workingDirectory, Map<String, String> environment,
            boolean pipeStdin, boolean mergeStderr) throws IOException {
        List<String> argv = new ArrayList<>();
        argv.add("setsid");
        argv.addAll(shell);
        ProcessBuilder builder = new ProcessBuilder(argv)
                .directory(workingDirectory.toFile())
                .redirectInput(pipeStdin ? ProcessBuilder.Redirect.PIPE : ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(mergeStderr);
        builder.environment().clear();
        builder.environment().putAll(environment);
        return builder.start();
    }
}
