package dev.sandboxmcp.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandboxmcp.exec.DiskFloor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every limit as declared in {@link Limits}: read from its variable at its edges, refused past them, documented. */
class LimitsTest {

    static final Path CONFIGURATION_DOC = Path.of("..", "docs", "configuration.md");

    static List<DeclaredLimits.Declared> settings() {
        return DeclaredLimits.DECLARED.stream().filter(DeclaredLimits.Declared::setting).toList();
    }

    /** {@code value} for {@code limit}, and the limit it may not exceed at its largest, so that any value in range fits. */
    static Map<String, String> env(DeclaredLimits.Declared limit, String value) {
        Map<String, String> env = new HashMap<>();
        DeclaredLimits.DECLARED.stream().filter(d -> d.name().equals(limit.limit().atMost()))
                .forEach(other -> env.put(other.limit().variable(), Long.toString(other.max())));
        env.put(limit.limit().variable(), value);
        return env;
    }

    @Test
    void everySettingIsReadFromItsVariableAtBothEdges() throws Exception {
        assertThat(settings()).hasSizeGreaterThan(10);
        for (DeclaredLimits.Declared limit : settings()) {
            for (long edge : new long[] {limit.min(), limit.max()}) {
                Limits read = Limits.fromEnvironment(env(limit, " " + edge + " "));
                assertThat(read.values()).as(limit.limit().variable() + "=" + edge).containsEntry(limit.name(), edge);
            }
            assertThat(Limits.fromEnvironment(Map.of(limit.limit().variable(), "")).values())
                    .as("an empty " + limit.limit().variable() + " is its default")
                    .containsEntry(limit.name(), limit.limit().byDefault());
        }
    }

    @Test
    void everySettingRefusesABadValueWithOneLineNamingItsVariable() {
        for (DeclaredLimits.Declared limit : settings()) {
            String variable = limit.limit().variable();
            for (String bad : List.of(Long.toString(limit.min() - 1), Long.toString(limit.max() + 1), "12x", "1.5", "-",
                    "99999999999999999999")) {
                assertThatThrownBy(() -> Limits.fromEnvironment(env(limit, bad))).as(variable + "=" + bad)
                        .isInstanceOf(ConfigException.class)
                        .hasMessageStartingWith(variable + " must be a whole number from " + limit.min() + " to " + limit.max())
                        .hasMessageEndingWith("got '" + bad + "'")
                        .hasMessageNotContaining("\n");
            }
        }
    }

    @Test
    void theConfigurationDocsLimitsTableIsTheDeclarations() throws Exception {
        List<String> lines = Files.readAllLines(CONFIGURATION_DOC);
        int header = lines.indexOf(TABLE_HEADER);
        assertThat(header).as("docs/configuration.md has the limits table").isPositive();
        List<String> table = lines.subList(header + 2, lines.size()).stream().takeWhile(line -> line.startsWith("|")).toList();
        List<String> expected = settings().stream().map(LimitsTest::row).toList();
        assertThat(table).as("docs/configuration.md's limits table must read:\n" + String.join("\n", expected))
                .containsExactlyElementsOf(expected);
    }

    static final String TABLE_HEADER = "| limit variable | default | range | meaning |";

    /** The row of docs/configuration.md's limits table that {@code limit}'s declaration makes. */
    static String row(DeclaredLimits.Declared limit) {
        String atMost = limit.limit().atMost().isEmpty() ? "" : ", at most `" + DeclaredLimits.DECLARED.stream()
                .filter(d -> d.name().equals(limit.limit().atMost())).findFirst().orElseThrow().limit().variable() + "`";
        return "| `" + limit.limit().variable() + "` | `" + limit.limit().byDefault() + "` | " + limit.min() + " to "
                + limit.max() + atMost + " | " + limit.limit().doc() + " |";
    }

    @Test
    void fixedBoundsAreNoSettings() throws Exception {
        Map<String, String> env = new HashMap<>();
        DeclaredLimits.DECLARED.stream().filter(d -> !d.setting())
                .forEach(d -> env.put("MCP_" + d.name().toUpperCase(), "1"));
        assertThat(Limits.fromEnvironment(env)).isEqualTo(Limits.defaults());
        assertThat(DeclaredLimits.DECLARED.stream().filter(d -> !d.setting()).toList()).allSatisfy(d ->
                assertThat(d.min()).isEqualTo(d.max()).isEqualTo(d.limit().byDefault()));
    }

    @Test
    void valuesRoundTripAndAnythingElseIsRefusedNamingTheLimit() throws Exception {
        Limits set = Limits.fromEnvironment(Map.of("MCP_FILE_LIMIT_BYTES", "8192", "MCP_CALL_BUDGET_SECONDS", "5",
                "MCP_KILL_GRACE_MILLIS", "0"));
        assertThat(Limits.fromValues(set.values())).isEqualTo(set).isNotEqualTo(Limits.defaults());
        assertThat(set.values()).containsEntry("fileMaxBytes", 8192L).containsEntry("callBudget", 5L)
                .containsEntry("killGrace", 0L).hasSize(Limits.class.getRecordComponents().length);

        Map<String, Long> huge = new LinkedHashMap<>(set.values());
        huge.put("fileMaxBytes", (long) Integer.MAX_VALUE);
        assertThatThrownBy(() -> Limits.fromValues(huge)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the limit fileMaxBytes at 2147483647, outside 1024..67108864");
        Map<String, Long> fixed = new LinkedHashMap<>(set.values());
        fixed.put("pageBytes", 1L);
        assertThatThrownBy(() -> Limits.fromValues(fixed)).hasMessageContaining("pageBytes at 1, outside 65536..65536");
        Map<String, Long> over = new LinkedHashMap<>(set.values());
        over.put("outputViewBytes", over.get("outputCapBytes") + 1);
        assertThatThrownBy(() -> Limits.fromValues(over)).hasMessageContaining("outputViewBytes");
        Map<String, Long> missing = new LinkedHashMap<>(set.values());
        missing.remove("maxJobs");
        assertThatThrownBy(() -> Limits.fromValues(missing)).hasMessage("no value for the limit maxJobs");
        Map<String, Long> unknown = new LinkedHashMap<>(set.values());
        unknown.put("sandboxOff", 1L);
        assertThatThrownBy(() -> Limits.fromValues(unknown)).hasMessage("an unknown limit 'sandboxOff'");
    }

    @Test
    void theDiskFloorHoldsAtItsEdgesIsOffAtZeroAndIsStatedToTheRunner() throws Exception {
        Limits defaults = Limits.defaults();
        assertThat(defaults.diskFloorBytes()).isEqualTo(2L << 30);
        assertThat(defaults.diskFloorPercent()).isEqualTo(5);
        assertThat(DiskFloor.of(defaults).off()).isFalse();
        assertThat(DiskFloor.of(Limits.fromEnvironment(Map.of("MCP_DISK_FLOOR_MIB", "0", "MCP_DISK_FLOOR_PERCENT", "0")))
                .off()).isTrue();
        assertThat(DiskFloor.of(Limits.fromEnvironment(Map.of("MCP_DISK_FLOOR_MIB", "0"))).off()).isFalse();
        Limits largest = Limits.fromEnvironment(Map.of("MCP_DISK_FLOOR_MIB", "16777216", "MCP_DISK_FLOOR_PERCENT", "50"));
        assertThat(largest.diskFloorBytes()).as("16 TiB, past what an int of bytes holds").isEqualTo(16L << 40);
        assertThat(largest.diskFloorPercent()).isEqualTo(50);
        assertThatThrownBy(() -> Limits.fromEnvironment(Map.of("MCP_DISK_FLOOR_MIB", "16777217")))
                .hasMessage("MCP_DISK_FLOOR_MIB must be a whole number from 0 to 16777216, got '16777217'");
        assertThatThrownBy(() -> Limits.fromEnvironment(Map.of("MCP_DISK_FLOOR_PERCENT", "51")))
                .hasMessage("MCP_DISK_FLOOR_PERCENT must be a whole number from 0 to 50, got '51'");
        assertThatThrownBy(() -> Limits.fromEnvironment(Map.of("MCP_DISK_FLOOR_MIB", "-1")))
                .hasMessageContaining("MCP_DISK_FLOOR_MIB");

        Limits set = Limits.fromEnvironment(Map.of("MCP_DISK_FLOOR_MIB", "64", "MCP_DISK_FLOOR_PERCENT", "0"));
        Limits runner = Limits.fromValues(set.values());
        assertThat(runner.diskFloorBytes()).isEqualTo(64L << 20);
        assertThat(runner.diskFloorPercent()).isZero();
    }
}
