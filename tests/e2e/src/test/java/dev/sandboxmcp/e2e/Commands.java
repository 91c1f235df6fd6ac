package dev.sandboxmcp.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs a host command (docker, docker-compose, java, bash) and collects its output. */
final class Commands {

    record Result(int exitCode, String output) {
    }

    private Commands() {
    }

    static Result run(List<String> command, Map<String, String> env, Path directory, int timeoutSeconds)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        if (directory != null) {
            builder.directory(directory.toFile());
        }
        builder.environment().putAll(env);
        Process process = builder.start();
        process.getOutputStream().close();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(output unreadable: " + e + ")";
            }
        });
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException("timed out after " + timeoutSeconds + " s: " + String.join(" ", command));
        }
        return new Result(process.exitValue(), output.join());
    }

    static Result run(List<String> command, int timeoutSeconds) throws IOException, InterruptedException {
        return run(command, Map.of(), null, timeoutSeconds);
    }

    /**
     * Runs one of the repository's install scripts (infra/traefik/install.sh,
     * infra/tailscale/build.sh), which print the path of what they installed on their last line.
     */
    static Path installed(String script, int timeoutSeconds) throws IOException, InterruptedException {
        Result result = run(List.of(Repo.path(script).toString()), Map.of(), Repo.root(), timeoutSeconds);
        if (result.exitCode() != 0) {
            throw new AssertionError(script + " failed:\n" + result.output());
        }
        return Path.of(result.output().strip().lines().toList().getLast());
    }

    /** {@code docker compose} when the v2 plugin is there, else Debian's {@code docker-compose}. */
    static List<String> compose() throws IOException, InterruptedException {
        try {
            if (run(List.of("docker", "compose", "version"), 30).exitCode() == 0) {
                return List.of("docker", "compose");
            }
        } catch (IOException ignored) {
            // no docker CLI plugin
        }
        return List.of("docker-compose");
    }
}
