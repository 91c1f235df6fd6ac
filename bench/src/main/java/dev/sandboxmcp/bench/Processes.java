package dev.sandboxmcp.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Starting servers, waiting for them, and reading their memory. */
final class Processes {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private Processes() {
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    static Process start(List<String> command, Map<String, String> env, Path log) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().putAll(env);
        return builder.start();
    }

    /** Milliseconds from {@code startedNanos} until {@code probe} answers, polling every 5 ms. */
    static long millisUntilAnswers(long startedNanos, Probe probe, Duration timeout) throws Exception {
        long deadline = startedNanos + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (probe.answers()) {
                return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos);
            }
            Thread.sleep(5);
        }
        throw new IllegalStateException("no answer within " + timeout);
    }

    interface Probe {
        boolean answers() throws Exception;
    }

    static boolean healthy(String url) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The body of a GET, or "" when nothing answers. */
    static String body(String url) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    static boolean listening(int port) {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Resident set size of a process, in MiB. */
    static double rssMib(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"), StandardCharsets.UTF_8)) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
            }
        }
        throw new IOException("no VmRSS for " + pid);
    }

    /** The RSS of a process and all its descendants (the server and the runner it started). */
    static double treeRssMib(long pid) throws IOException {
        double total = rssMib(pid);
        for (ProcessHandle child : ProcessHandle.of(pid).map(p -> p.descendants().toList()).orElse(List.of())) {
            try {
                total += rssMib(child.pid());
            } catch (IOException gone) {
                // a command that ended meanwhile
            }
        }
        return total;
    }

    static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor(120, TimeUnit.SECONDS);
        if (process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
        return out.strip();
    }
}
