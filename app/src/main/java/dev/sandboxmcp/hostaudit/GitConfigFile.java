package dev.sandboxmcp.hostaudit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The entries of one git configuration file, as the host's own git reads them
 * ({@code git config --file F --no-includes --list -z}). Reading it with git, not a parser of our
 * own, means the audit sees exactly what the git that would run the commands sees: the same
 * quoting, continuation lines, comments and case rules, in this git's version, with no room for
 * a file written to be read one way by the audit and another by git. Listing runs nothing.
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

    private static final long TIMEOUT_SECONDS = 30;
    private static final int MAX_LISTING_BYTES = 64 * 1024 * 1024;

    private final String git;

    GitConfigFile(String git) {
        this.git = git;
    }

    List<Entry> read(Path file) throws Unreadable, IOException {
        ProcessBuilder builder = new ProcessBuilder(git, "config", "--file", file.toString(), "--no-includes", "--list", "-z")
                .directory(Path.of("/").toFile()).redirectErrorStream(false);
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
        process.getOutputStream().close();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        Thread errors = Thread.ofVirtual().start(() -> {
            try (InputStream err = process.getErrorStream()) {
                err.transferTo(stderr);
            } catch (IOException ignored) {
                // the process ended
            }
        });
        byte[] stdout;
        try (InputStream out = process.getInputStream()) {
            stdout = out.readNBytes(MAX_LISTING_BYTES + 1);
            if (stdout.length > MAX_LISTING_BYTES) {
                throw new IOException("more than " + MAX_LISTING_BYTES / (1024 * 1024) + " MiB of settings; too large to audit");
            }
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IOException("git config took more than " + TIMEOUT_SECONDS + " s");
            }
            errors.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            process.destroyForcibly();
        }
        if (process.exitValue() != 0) {
            throw new Unreadable(stderr.toString(StandardCharsets.UTF_8).strip());
        }
        return parse(new String(stdout, StandardCharsets.UTF_8));
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
