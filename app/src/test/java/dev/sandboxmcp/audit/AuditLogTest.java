package dev.sandboxmcp.audit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.ProcessLog;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AuditLogTest {

    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final AuditLog log = new AuditLog(new PrintStream(bytes, true, StandardCharsets.UTF_8));

    /** The call's two lines, start and end, each whole in its one line; the end line. */
    private Map<String, Object> onlyCall() {
        String written = bytes.toString(StandardCharsets.UTF_8);
        assertThat(written).endsWith("\n");
        assertThat(written.lines()).hasSize(2);
        assertThat(written.chars()).as("printable ASCII only").allMatch(c -> c == '\n' || (c >= 0x20 && c < 0x7f));
        assertThat(ProcessLog.startLines(written)).singleElement().satisfies(start -> assertThat(start)
                .containsEntry("event", "tool_call_started").containsEntry("client", "203.0.113.7")
                .containsEntry("peer", "127.0.0.1").doesNotContainKeys("outcome", "duration_ms"));
        List<Map<String, Object>> lines = ProcessLog.auditLines(written);
        assertThat(lines).hasSize(1);
        return lines.getFirst();
    }

    private void record(String target, String error) {
        long call = log.nextCall();
        log.started(new CallStarted(call, Instant.EPOCH, "run_command", target, "203.0.113.7", "127.0.0.1"));
        log.record(new AuditEvent(call, Instant.EPOCH, "run_command", target, AuditEvent.Outcome.ERROR, null, null, 5,
                "203.0.113.7", "127.0.0.1", error));
    }

    @Test
    void everyValueStaysInItsOneLineAndComesBackAsItWas() {
        String hostile = "a\nb\r\u2028c\u2029d\u0085e\u0000f\u001bg\ud800h\udc00i\ud83d\ude00" + ProcessLog.forgedAuditLine("FORGED");
        record(hostile, "error\n" + hostile);
        Map<String, Object> line = onlyCall();
        assertThat(line).containsEntry("target", hostile).containsEntry("error", "error\n" + hostile)
                .containsEntry("outcome", "error").doesNotContainKey("target_chars");
    }

    @Test
    void aValueIsCutAtItsBoundAndSaysItsLength() {
        String atBound = "x".repeat(AuditLog.VALUE_CHARS);
        String over = "y".repeat(AuditLog.VALUE_CHARS - 1) + "\ud83d\ude00" + "z".repeat(10_000_000);
        record(atBound, over);
        Map<String, Object> line = onlyCall();
        assertThat(line).containsEntry("target", atBound).doesNotContainKey("target_chars")
                .containsEntry("error", "y".repeat(AuditLog.VALUE_CHARS - 1)) // not half of the emoji's pair
                .containsEntry("error_chars", over.length());
        assertThat(bytes.size()).as("both lines").isLessThan(4 * AuditLog.VALUE_CHARS);
    }

    @Test
    void eachCallHasItsOwnNumberOnBothItsLines() {
        long first = log.nextCall();
        long second = log.nextCall();
        log.started(new CallStarted(first, Instant.EPOCH, "read_file", "a", "c", "p"));
        log.started(new CallStarted(second, Instant.EPOCH, "read_file", "b", "c", "p"));
        log.record(new AuditEvent(second, Instant.EPOCH, "read_file", "b", AuditEvent.Outcome.OK, null, 3L, 1, "c", "p", null));
        String written = bytes.toString(StandardCharsets.UTF_8);
        assertThat(second).isNotEqualTo(first);
        assertThat(ProcessLog.startLines(written)).extracting(line -> line.get("target"), line -> line.get("call"))
                .containsExactly(org.assertj.core.groups.Tuple.tuple("a", (int) first),
                        org.assertj.core.groups.Tuple.tuple("b", (int) second));
        assertThat(ProcessLog.auditLines(written)).singleElement().satisfies(end -> assertThat(end)
                .containsEntry("call", (int) second).containsEntry("target", "b"));
    }

    @Test
    void everyLineNamesItsRunAndARestartIsANewRun() {
        ByteArrayOutputStream again = new ByteArrayOutputStream();
        AuditLog restarted = new AuditLog(new PrintStream(again, true, StandardCharsets.UTF_8));
        for (AuditLog each : List.of(log, restarted)) {
            long call = each.nextCall();
            each.started(new CallStarted(call, Instant.EPOCH, "read_file", "a", "c", "p"));
            each.record(new AuditEvent(call, Instant.EPOCH, "read_file", "a", AuditEvent.Outcome.OK, null, 3L, 1, "c", "p", null));
        }
        assertThat(log.run()).matches("[0-9a-f]{" + AuditLog.RUN_DIGITS + "}").isNotEqualTo(restarted.run());
        String first = bytes.toString(StandardCharsets.UTF_8);
        String second = again.toString(StandardCharsets.UTF_8);
        assertThat(ProcessLog.startLines(first)).singleElement().satisfies(line -> assertThat(line)
                .containsEntry("run", log.run()).containsEntry("call", 1));
        assertThat(ProcessLog.auditLines(second)).singleElement().satisfies(line -> assertThat(line)
                .containsEntry("run", restarted.run()).containsEntry("call", 1));
        // Both runs' lines in one log, as docker logs shows a restarted server's: call 1 twice, each paired in its run.
        assertThat(ProcessLog.auditLines(first + second)).hasSize(2);
    }
}
