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
 * bytes, reading the listing, git's exit) has one deadline, after which git is killed.
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
        ProcessBuilder builder = new ProcessBuilder(git, "config", "--file", "-", "--no-includes", "--list", "-z")
                .directory(Path.of("/").toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("GIT_"));
        env.put("GIT_CONFIG_NOSYSTEM", "1");
        env.put("GIT_CONFIG_GLOBAL", "/dev/null");
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
                in.write(content);
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
        return parse(stdout.toString(StandardCharsets.UTF_8));
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
