package dev.sandboxmcp.hostaudit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** How long a result computed from a file's bytes stands, by the file's change time when it was read. */
class KeptResultsTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long NOW = 1_000_000 * SECOND;

    @Test
    void aFileChangedWithinTheLastSecondIsNotKept() {
        KeptResults<String, String> kept = new KeptResults<>(10);
        kept.keep("a", "hash", NOW - SECOND / 2, NOW, true);
        assertThat(kept.get("a", NOW)).isNull();
    }

    @Test
    void aSettledFileIsKeptForAMinute() {
        KeptResults<String, String> kept = new KeptResults<>(10);
        kept.keep("a", "hash", NOW - 5 * SECOND, NOW, true);
        assertThat(kept.get("a", NOW + 59 * SECOND)).isEqualTo("hash");
        assertThat(kept.get("a", NOW + 61 * SECOND)).isNull();
        assertThat(kept.lastingInUse()).isEmpty();
    }

    /** Its pages written back, a write through a mapping faults and moves the times: kept while the file stays. */
    @Test
    void aFileChangedBeforeTheWritebackWindowIsKeptWhileItStays() {
        KeptResults<String, String> kept = new KeptResults<>(10);
        long old = NOW - KeptResults.WRITEBACK_WINDOW_NANOS - SECOND;
        kept.keep("written back", "hash", old, NOW, true);
        kept.keep("on tmpfs", "hash", old, NOW, false);
        assertThat(kept.get("written back", NOW + TimeUnit.DAYS.toNanos(30))).isEqualTo("hash");
        assertThat(kept.get("on tmpfs", NOW + 61 * SECOND)).as("tmpfs never writes a page back").isNull();
        assertThat(KeptResults.WRITEBACK_WINDOW_NANOS).isGreaterThanOrEqualTo(TimeUnit.MINUTES.toNanos(2));
    }

    @Test
    void whatIsSavedIsWhatWasUsedSinceTheLastSave() {
        KeptResults<String, String> kept = new KeptResults<>(10);
        long old = NOW - KeptResults.WRITEBACK_WINDOW_NANOS - SECOND;
        kept.keep("checked", "a", old, NOW, true);
        kept.keepLasting("loaded, not seen since", "b");
        kept.keepLasting("loaded and seen", "c");
        assertThat(kept.get("loaded and seen", NOW)).isEqualTo("c");
        assertThat(kept.lastingInUse()).containsOnlyKeys("checked", "loaded and seen");
        assertThat(kept.lastingInUse()).as("none used since").isEmpty();
    }

    @Test
    void beyondItsBoundNothingMoreIsKept() {
        KeptResults<String, String> kept = new KeptResults<>(2);
        for (String key : new String[] {"a", "b", "c"}) {
            kept.keep(key, key, NOW - 5 * SECOND, NOW, true);
        }
        assertThat(kept.get("c", NOW)).isNull();
        kept.keep("d", "d", NOW, NOW + 62 * SECOND, true);
        assertThat(kept.get("d", NOW + 62 * SECOND)).as("what expired was dropped to make room").isEqualTo("d");
    }
}
