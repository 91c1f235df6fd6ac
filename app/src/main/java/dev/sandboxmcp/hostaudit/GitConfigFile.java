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
 * The entries of one git configuration file, as the host's own git reads them
 * ({@code git config --file - --no-includes --list -z}, the file's bytes on standard input).
 * Reading it with git, not a parser of our own, means the audit sees exactly what the git that
 * would run the commands sees: the same quoting, continuation lines, comments and case rules, in
 * this git's version, with no room for a file written to be read one way by the audit and another
 * by git. Listing runs nothing.
 *
 * <p>git never opens the file itself: the caller read it through a descriptor that cannot wait
 * (a FIFO swapped in for it is reported, not opened by git), and the whole exchange (writing the
 * bytes, reading the listing, git's exit) has one deadline, after which git is killed. The one
 * exception, {@link #usersValue}, reads the host user's own configuration, which git opens (with
 * the same deadline: an include of it may lead into the tree).
 */
final class GitConfigFile {

    /** One entry; {@code value} is null for a bare key (a boolean true). */
    record Entry(String key, String value) {
    }

    /** git refused the file (git says why); git on the host refuses it the same way, so nothing in it runs. */
    static final class Unreadable extends Exception {
        Unreadable(String why) {
            super(why);
        }
    }

    static final long DEFAULT_TIMEOUT_MILLIS = 30_000;
    private static final int MAX_LISTING_BYTES = 64 * 1024 * 1024;
    private static final int MAX_STDERR_BYTES = 64 * 1024;

    private final String git;
    private final long timeoutMillis;

    GitConfigFile(String git) {
        this(git, DEFAULT_TIMEOUT_MILLIS);
    }

    GitConfigFile(String git, long timeoutMillis) {
        this.git = git;
        this.timeoutMillis = timeoutMillis;
    }

    List<Entry> read(byte[] content) throws Unreadable, IOException {
        return parse(git(content, true, "config", "--file", "-", "--no-includes", "--list", "-z"));
    }

    /**
     * The value of {@code key} that the host user's own configuration gives every repository
     * (global over system, the last one set, includes followed); null when none sets it, or when
     * git refuses that configuration (then git on the host refuses to run as well).
     */
    String usersValue(String key) throws IOException {
        for (String scope : List.of("--global", "--system")) {
            try {
                // Each value ends in a NUL: the last one set is the one before the last (empty) piece.
                String[] values = git(new byte[0], false, "config", scope, "--includes", "-z", "--get-all", key).split("\0", -1);
                if (values.length >= 2) {
                    return values[values.length - 2];
                }
            } catch (Unreadable notSetOrRefused) {
                // exit 1: not set in this scope
            }
        }
        return null;
    }

    /**
     * Runs git with {@code args}, {@code stdin} on its standard input, from {@code /} with no
     * {@code GIT_*} variable; {@code isolated}: with neither the system's nor the user's
     * configuration. Returns its output; a non-zero exit is {@link Unreadable} with what git said.
     */
    private String git(byte[] stdin, boolean isolated, String... args) throws Unreadable, IOException {
        List<String> command = new ArrayList<>(List.of(git));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(Path.of("/").toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("GIT_"));
        if (isolated) {
            env.put("GIT_CONFIG_NOSYSTEM", "1");
            env.put("GIT_CONFIG_GLOBAL", "/dev/null");
        }
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new IOException("cannot run " + git + " (the audit reads git configuration with the host's git): "
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
        Thread out = Thread.ofVirtual().start(() -> drain(process.getInputStream(), stdout, MAX_LISTING_BYTES + 1));
        Thread err = Thread.ofVirtual().start(() -> drain(process.getErrorStream(), stderr, MAX_STDERR_BYTES));
        try {
            if (!process.waitFor(remaining(deadline), TimeUnit.NANOSECONDS)) {
                throw new IOException("git config took more than " + timeoutMillis + " ms; killed");
            }
            for (Thread thread : List.of(writer, out, err)) {
                if (!thread.join(java.time.Duration.ofNanos(Math.max(1, remaining(deadline))))) {
                    throw new IOException("git config's output was not closed within " + timeoutMillis + " ms");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            process.destroyForcibly();
            process.descendants().forEach(ProcessHandle::destroyForcibly);
        }
        if (stdout.size() > MAX_LISTING_BYTES) {
            throw new IOException("more than " + MAX_LISTING_BYTES / (1024 * 1024) + " MiB of settings; too large to audit");
        }
        if (process.exitValue() != 0) {
            throw new Unreadable(stderr.toString(StandardCharsets.UTF_8).strip());
        }
        return stdout.toString(StandardCharsets.UTF_8);
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

    /** {@code key\nvalue\0} per entry, or {@code key\0} for a bare key. */
    static List<Entry> parse(String listing) {
        List<Entry> entries = new ArrayList<>();
        for (String record : listing.split("\0")) {
            if (record.isEmpty()) {
                continue;
            }
            int newline = record.indexOf('\n');
            entries.add(newline < 0 ? new Entry(record, null)
                    : new Entry(record.substring(0, newline), record.substring(newline + 1)));
        }
        return entries;
    }
}
