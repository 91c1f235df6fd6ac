package dev.sandboxmcp.tools;

import com.github.difflib.DiffUtils;
import com.github.difflib.UnifiedDiffUtils;
import com.github.difflib.patch.AbstractDelta;
import com.github.difflib.patch.ChangeDelta;
import com.github.difflib.patch.Chunk;
import com.github.difflib.patch.DeleteDelta;
import com.github.difflib.patch.InsertDelta;
import com.github.difflib.patch.Patch;
import dev.sandboxmcp.workspace.Names;
import java.util.List;

/**
 * The unified diff of an edit, in bounded time and size. Myers' algorithm costs lines times
 * differences, so an edit that changes tens of thousands of lines would keep the server busy for
 * minutes: the lines both versions share at the start and the end are set aside first (linear),
 * and only a small changed middle is diffed line by line; a large one becomes a single hunk. A
 * diff longer than {@code maxChars} is cut at a line, and says so.
 */
record EditDiff(String text, boolean truncated) {

    /** Lines of changed middle (both sides together) that Myers' algorithm is run on. */
    static final int MAX_FINE_DIFF_LINES = 4_000;

    static EditDiff of(String path, String before, String after, int maxChars) {
        List<String> original = before.lines().toList();
        List<String> revised = after.lines().toList();
        List<String> lines = UnifiedDiffUtils.generateUnifiedDiff(Names.display("a/" + path), Names.display("b/" + path),
                original, patch(original, revised), 3);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < lines.size(); i++) {
            if (out.length() + lines.get(i).length() + 1 > maxChars) {
                out.append("... diff cut at ").append(maxChars / 1024).append(" KiB, ").append(lines.size() - i)
                        .append(" more lines; the edit itself is complete: read the file to see the rest\n");
                return new EditDiff(out.toString(), true);
            }
            out.append(lines.get(i)).append('\n');
        }
        return new EditDiff(out.toString(), false);
    }

    static Patch<String> patch(List<String> original, List<String> revised) {
        int prefix = 0;
        while (prefix < original.size() && prefix < revised.size() && original.get(prefix).equals(revised.get(prefix))) {
            prefix++;
        }
        int suffix = 0;
        while (suffix < original.size() - prefix && suffix < revised.size() - prefix
                && original.get(original.size() - 1 - suffix).equals(revised.get(revised.size() - 1 - suffix))) {
            suffix++;
        }
        List<String> from = original.subList(prefix, original.size() - suffix);
        List<String> to = revised.subList(prefix, revised.size() - suffix);
        Patch<String> patch = new Patch<>();
        if (from.isEmpty() && to.isEmpty()) {
            return patch;
        }
        if (from.size() + to.size() > MAX_FINE_DIFF_LINES) {
            Chunk<String> source = new Chunk<>(prefix, from);
            Chunk<String> target = new Chunk<>(prefix, to);
            patch.addDelta(from.isEmpty() ? new InsertDelta<>(source, target)
                    : to.isEmpty() ? new DeleteDelta<>(source, target) : new ChangeDelta<>(source, target));
            return patch;
        }
        for (AbstractDelta<String> delta : DiffUtils.diff(from, to).getDeltas()) {
            patch.addDelta(delta.withChunks(shift(delta.getSource(), prefix), shift(delta.getTarget(), prefix)));
        }
        return patch;
    }

    private static Chunk<String> shift(Chunk<String> chunk, int by) {
        return new Chunk<>(chunk.getPosition() + by, chunk.getLines());
    }
}
