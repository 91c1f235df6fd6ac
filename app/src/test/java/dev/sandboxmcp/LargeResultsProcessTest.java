package dev.sandboxmcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Results as large as the runner sends, many at once, to a server process with a 128 MiB heap
 * that exits on OutOfMemoryError. A read_file page with a limit, of a file of control characters,
 * is the largest answer: a page is bounded by its size as JSON (six bytes a control character),
 * so it is a line of about 2 MiB (its text twice), which the server's heap budget holds several of
 * at once. When pages were bounded by their bytes such a page was a 12 MiB line: three at once
 * killed the server before answers were charged to its budget, and it took one at a time after.
 */
class LargeResultsProcessTest {

    @TempDir
    Path temp;

    @Test
    void aDirectoryWhoseNamesWouldFillTheRunnersHeapIsListedToTheCap() throws Exception {
        try (ServerProcessTest.Server server = ServerProcessTest.Server.startSmallHeap(temp)) {
            // 300,000 names of 240 characters: about 180 MB as paths and strings, more than the
            // runner's 128 MiB heap, which all of them were read into before the first was listed.
            Path huge = Files.createDirectory(server.workspace.resolve("huge"));
            for (int i = 0; i < 300_000; i++) {
                Files.createFile(huge.resolve(String.format("%0240d", i)));
            }
            String body = server.callTool("list_directory", "{\"path\":\"huge\"}");
            assertThat(body).as("%.300s", body).contains("\"isError\":false").contains("\"truncated\":true")
                    .contains(String.format("%0240d", 1999)).doesNotContain(String.format("%0240d", 2000));
            assertThat(server.process.isAlive()).as(server.output()).isTrue();
            assertThat(server.callTool("list_directory", "{}")).as("the same runner answers").contains("huge/");
            assertThat(server.output()).doesNotContain("OutOfMemoryError").doesNotContain("runner exited");
        }
    }

    @Test
    void eightLargestResultsAtOnceAreEachAnsweredWholeAndTheServerStaysUp() throws Exception {
        try (ServerProcessTest.Server server = ServerProcessTest.Server.startSmallHeap(temp)) {
            byte[] control = new byte[1 << 20];
            Arrays.fill(control, (byte) 1); // valid UTF-8, not NUL, six bytes as JSON
            for (int i = 99; i < control.length; i += 100) {
                control[i] = '\n';
            }
            Files.write(server.workspace.resolve("control.txt"), control);
            String call = McpCalls.toolsCall("1", "read_file", "{\"path\":\"control.txt\",\"limit\":100000}");
            int calls = 8;
            for (int round = 0; round < 3; round++) {
                List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
                for (int i = 0; i < calls; i++) {
                    answers.add(server.http.sendAsync(McpCalls.post(server.port, ServerProcessTest.TOKEN, call),
                            HttpResponse.BodyHandlers.ofString()));
                }
                for (CompletableFuture<HttpResponse<String>> answer : answers) {
                    HttpResponse<String> response = answer.get(120, TimeUnit.SECONDS);
                    String body = response.body();
                    System.out.printf("round %d: %d, %d chars: %.160s%n", round, response.statusCode(), body.length(), body);
                    assertThat(response.statusCode()).isEqualTo(200);
                    assertThat(body).contains("\"isError\":false").contains("more follows: call again with offset=");
                    assertThat(body.length()).as("a page of the file limit as JSON, twice")
                            .isBetween(2 * 1024 * 1024 * 9 / 10, 2 * 1024 * 1024 + 64 * 1024);
                }
                assertThat(server.process.isAlive()).as("alive after round %d: %s", round, server.output()).isTrue();
                assertThat(server.health()).as("the server and its runner").isEqualTo(200);
            }
        }
    }
}
