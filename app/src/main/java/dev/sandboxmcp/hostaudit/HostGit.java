package dev.sandboxmcp.hostaudit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The host's git as the audit runs it: with none of the audit's own {@code GIT_*} variables,
 * from a directory the caller names, and one deadline over the whole exchange (its input
 * written, its output read, its exit), after which it and what it started are killed. What it
 * prints is kept up to a bound.
 */
final class HostGit {

    /** What git printed, and its exit code. */
    record Result(int exit, String stdout, String stderr) {
    }

    /** git did not end within its deadline, and was killed. */
    static final class TimedOut extends IOException {
        TimedOut(String message) {
            super(message);
        }
    }

    /** Neither the system's nor the user's configuration. */
    static final Map<String, String> ISOLATED = Map.of("GIT_CONFIG_NOSYSTEM", "1", "GIT_CONFIG_GLOBAL", "/dev/null");
    private static final int MAX_STDERR_BYTES = 64 * 1024;

    final String git;

    HostGit(String git) {
        this.git = git;
    }

    /**
     * Runs git {@code args} from {@code directory} with {@code environment} added, {@code stdin}
     * on its standard input. An output longer than {@code maxStdout} bytes, a deadline passed
     * ({@link TimedOut}) or a git that cannot start is an {@link IOException} that says so.
     */
    Result run(List<String> args, Path directory, Map<String, String> environment, byte[] stdin, long timeoutMillis,
            int maxStdout) throws IOException {
        return run(args, directory, environment, stdin, timeoutMillis, maxStdout, 0);
    }

    /** As above, with at most {@code maxMemoryBytes} of address space for git (0: no bound), set by the shell's ulimit. */
    Result run(List<String> args, Path directory, Map<String, String> environment, byte[] stdin, long timeoutMillis,
            int maxStdout, long maxMemoryBytes) throws IOException {
        List<String> command = new ArrayList<>();
        if (maxMemoryBytes > 0) {
            command.addAll(List.of("/bin/sh", "-c", "ulimit -v \"$0\" && exec \"$@\"", String.valueOf(maxMemoryBytes / 1024)));
        }
        command.add(git);
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("GIT_"));
        env.putAll(environment);
        String what = "git " + args.getFirst();
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new IOException("cannot run " + git + " (the audit reads git's files with the host's git): "
                    + e.getMessage(), e);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        Thread writer = Thread.ofVirtual().start(() -> {
            try (OutputStream in = process.getOutputStream()) {
                in.write(stdin);
            } catch (IOException ignored) {
                // git ended before reading everything: its exit status and stderr say why
            }
        });
        Thread out = Thread.ofVirtual().start(() -> drain(process.getInputStream(), stdout, maxStdout + 1));
        Thread err = Thread.ofVirtual().start(() -> drain(process.getErrorStream(), stderr, MAX_STDERR_BYTES));
        try {
            if (!process.waitFor(remaining(deadline), TimeUnit.NANOSECONDS)) {
                throw new TimedOut(what + " took more than " + timeoutMillis + " ms; killed");
            }
            for (Thread thread : List.of(writer, out, err)) {
                if (!thread.join(java.time.Duration.ofNanos(Math.max(1, remaining(deadline))))) {
                    throw new IOException(what + "'s output was not closed within " + timeoutMillis + " ms");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            process.destroyForcibly();
            process.descendants().forEach(ProcessHandle::destroyForcibly);
        }
        if (stdout.size() > maxStdout) {
            throw new IOException(what + " printed more than " + maxStdout / (1024 * 1024) + " MiB; too large to audit");
        }
        return new Result(process.exitValue(), stdout.toString(StandardCharsets.UTF_8),
                stderr.toString(StandardCharsets.UTF_8));
    }

    private static long remaining(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    /** Reads {@code stream} into {@code sink} up to {@code max} bytes, then discards the rest. */
    private static void drain(InputStream stream, ByteArrayOutputStream sink, int max) {
        try (stream) {
            byte[] buffer = new byte[8192];
            int n;
            while ((n = stream.read(buffer)) >= 0) {
                int keep = Math.min(n, max - sink.size());
                if (keep > 0) {
                    sink.write(buffer, 0, keep);
                }
            }
        } catch (IOException ignored) {
            // the process was killed
        }
    }
}
