package dev.sandboxmcp.workspace;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Replacing a file loses nothing: readers see a whole old version or a whole new one, never a mix. */
class WriteDurabilityTest {

    static final int SIZE = 2 * 1024 * 1024;

    @TempDir
    Path root;

    @Test
    void twentyConcurrentWritersLeaveOneWholeVersion() throws Exception {
        Files.writeString(root.resolve("shared.txt"), "original");
        List<String> versions = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            versions.add(String.valueOf((char) ('A' + i)).repeat(256 * 1024 + i));
        }
        try (Workspace workspace = Workspace.open(root); ExecutorService pool = Executors.newFixedThreadPool(20)) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> writes = new ArrayList<>();
            for (String version : versions) {
                writes.add(pool.submit(() -> {
                    start.await();
                    for (int round = 0; round < 5; round++) {
                        workspace.writeFile("shared.txt", version.getBytes(StandardCharsets.UTF_8));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> write : writes) {
                write.get(60, TimeUnit.SECONDS);
            }
        }
        String result = Files.readString(root.resolve("shared.txt"));
        assertThat(versions).contains(result);
        try (Stream<Path> files = Files.list(root)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("shared.txt");
        }
    }

    @Test
    void writerKilledMidWriteLeavesTheOldVersionOrTheNew() throws Exception {
        Path target = root.resolve("target.bin");
        byte[] initial = new byte[SIZE];
        Arrays.fill(initial, (byte) 'z');
        Files.write(target, initial);
        for (int attempt = 0; attempt < 6; attempt++) {
            Process writer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), WorkspaceWriterMain.class.getName(),
                    root.toString(), Integer.toString(SIZE))
                    .redirectErrorStream(true).redirectOutput(root.resolve("writer.log").toFile()).start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline && Files.readString(root.resolve("writer.log")).lines().count() < 2 + attempt) {
                Thread.sleep(5);
            }
            Thread.sleep(attempt * 7L);
            writer.destroyForcibly(); // SIGKILL, wherever it is in a write
            writer.waitFor(10, TimeUnit.SECONDS);

            byte[] content = Files.readAllBytes(target);
            assertThat(content).hasSize(SIZE);
            Set<Byte> distinct = new java.util.HashSet<>();
            for (byte b : content) {
                distinct.add(b);
            }
            assertThat(distinct).as("attempt %d: one whole version", attempt).hasSize(1);
        }
        try (Stream<Path> files = Files.list(root)) {
            Set<String> names = files.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
            // A killed writer may leave its temporary file behind; never a partial target.
            assertThat(names).contains("target.bin");
        }
    }
}
