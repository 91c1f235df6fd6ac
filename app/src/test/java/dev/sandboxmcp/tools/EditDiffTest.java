package dev.sandboxmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class EditDiffTest {

    @Property(tries = 300)
    void patchTurnsTheOriginalIntoTheRevision(@ForAll @Size(max = 60) List<@StringLength(max = 3) String> original,
            @ForAll @IntRange(min = 0, max = 60) int at, @ForAll @IntRange(min = 0, max = 5000) int removed,
            @ForAll @Size(max = 5000) List<@StringLength(max = 3) String> inserted) throws Exception {
        // One arbitrary splice, small or far past the fine-diff limit.
        int from = Math.min(at, original.size());
        int to = Math.min(original.size(), from + removed);
        List<String> revised = new ArrayList<>(original.subList(0, from));
        revised.addAll(inserted);
        revised.addAll(original.subList(to, original.size()));

        assertThat(EditDiff.patch(original, revised).applyTo(original)).isEqualTo(revised);
    }

    @Test
    void smallEditsGetLineByLineHunksWithContext() {
        String before = IntStream.range(0, 20).mapToObj(i -> "line " + i + "\n").collect(Collectors.joining());
        String after = before.replace("line 5\n", "line five\n").replace("line 15\n", "");
        EditDiff diff = EditDiff.of("f.txt", before, after, 1 << 20);
        assertThat(diff.truncated()).isFalse();
        assertThat(diff.text()).startsWith("--- a/f.txt\n+++ b/f.txt\n")
                .contains("@@ -3,7 +3,7 @@\n line 2\n line 3\n line 4\n-line 5\n+line five\n line 6\n")
                .contains("-line 15\n");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS) // before the bound this took minutes
    void editThatChangesEveryOneOfSixtyThousandLinesIsDiffedAndCutWithANote() {
        String before = IntStream.range(0, 60_000).mapToObj(i -> "line " + i + " x\n").collect(Collectors.joining());
        String after = before.replace(" x\n", " y\n");
        EditDiff diff = EditDiff.of("many.txt", before, after, 128 * 1024);
        assertThat(diff.truncated()).isTrue();
        assertThat(diff.text().length()).isLessThanOrEqualTo(128 * 1024 + 200);
        assertThat(diff.text()).startsWith("--- a/many.txt\n+++ b/many.txt\n@@ -1,60000 +1,60000 @@\n-line 0 x\n")
                .endsWith("more lines; the edit itself is complete: read the file to see the rest\n");
    }
}
