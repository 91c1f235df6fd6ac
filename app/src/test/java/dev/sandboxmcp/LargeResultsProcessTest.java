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
 * Results as large as the runner may send, many at once, to a server process with a 128 MiB heap
 * that exits on OutOfMemoryError. A page of a file of control characters is the largest answer
 * (JSON escapes each byte as six, and a result carries its text twice): before the server charged
 * answers to its heap budget, three such pages at once killed it.
 */
class LargeResultsProcessTest {

    @TempDir
    Path temp;

    @Test
    void manyLargestResultsAtOnceAreEachAnsweredOrRefusedByNameAndTheServerStaysUp() throws Exception {
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
                int full = 0;
                for (CompletableFuture<HttpResponse<String>> answer : answers) {
                    HttpResponse<String> response = answer.get(120, TimeUnit.SECONDS);
                    String body = response.body();
                    System.out.printf("round %d: %d, %d chars: %.160s%n", round, response.statusCode(), body.length(), body);
                    assertThat(response.statusCode()).isEqualTo(200);
                    if (body.contains("\"isError\":false")) {
                        assertThat(body.length()).as("the whole page").isGreaterThan(control.length * 6);
                        full++;
                    } else {
                        assertThat(body).contains("does not fit in the server's memory");
                    }
                }
                assertThat(server.process.isAlive()).as("alive after round %d: %s", round, server.output()).isTrue();
                assertThat(server.health()).isEqualTo(200);
                assertThat(full).as("at least one whole page a round").isPositive();
            }
        }
    }
}
