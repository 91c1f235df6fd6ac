package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandboxmcp.tools.LineIndex.Position;
import org.junit.jupiter.api.Test;

/** The sparse line index: what it keeps, what it ignores, and how it stays bounded. */
class LineIndexTest {

    /** Line n starts at byte 10 (n - 1) in this imaginary file. */
    static long start(long line) {
        return 10 * (line - 1);
    }

    @Test
    void learnsOnlyTheNextCheckpointAndFloorsToTheNearestKnownStart() {
        LineIndex index = new LineIndex(4, 100);
        index.learn(9, start(9)); // not the next checkpoint (5): ignored
        assertThat(index.floor(20)).isEqualTo(Position.START);
        index.learn(5, start(5));
        index.learn(9, start(9));
        assertThat(index.floor(4)).isEqualTo(Position.START);
        assertThat(index.floor(5)).isEqualTo(new Position(5, start(5)));
        assertThat(index.floor(8)).isEqualTo(new Position(5, start(5)));
        assertThat(index.floor(1_000)).isEqualTo(new Position(9, start(9)));
        assertThat(index.nextCheckpoint()).isEqualTo(13);
    }

    @Test
    void aFullIndexHalvesItsCheckpointsAndKeepsThemRight() {
        LineIndex index = new LineIndex(2, 8);
        for (long line = 1; line <= 10_000; line++) {
            if (line == index.nextCheckpoint()) {
                index.learn(line, start(line));
            }
        }
        assertThat(index.stride()).isGreaterThan(2);
        long stride = index.stride();
        assertThat(10_000 / stride).as("checkpoints kept").isLessThanOrEqualTo(8);
        for (long line = 1; line <= 10_000; line += 7) {
            Position floor = index.floor(line);
            assertThat(floor.offset()).isEqualTo(start(floor.line()));
            assertThat(floor.line()).isLessThanOrEqualTo(line)
                    .isGreaterThan(Math.min(line, index.nextCheckpoint() - stride) - stride);
        }
    }

    @Test
    void theTotalIsUnknownUntilAScanReachesTheEnd() {
        LineIndex index = new LineIndex();
        assertThat(index.totalLines()).isEmpty();
        index.learnTotal(42);
        assertThat(index.totalLines()).hasValue(42);
    }
}
