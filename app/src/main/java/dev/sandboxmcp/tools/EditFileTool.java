package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.DiskFloor;
import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code edit_file}: exact-text replacement in a file, written atomically, with a unified diff. */
final class EditFileTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": %d, "description": "File path relative to the workspace root."},
                "old_text": {"type": "string", "minLength": 1,
                  "description": "Exact text to replace, whitespace and line endings included. Include enough context to make it unique."},
                "new_text": {"type": "string", "description": "Replacement text."},
                "expected_replacements": {"type": "integer", "minimum": 1, "default": 1,
                  "description": "How many occurrences old_text must have; all of them are replaced."}
              },
              "required": ["path", "old_text", "new_text"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string"},
                "replacements": {"type": "integer"},
                "diff": {"type": "string", "description": "Unified diff of the change."},
                "diff_truncated": {"type": "boolean", "description": "The diff was cut (at %d KiB); the edit itself is complete."},
                "bytes": {"type": "integer", "description": "Size of the file after the edit."}
              },
              "required": ["path", "replacements", "diff", "diff_truncated", "bytes"]
            }""";

    static ToolSpec spec(Limits limits) {
        return new ToolSpec("edit_file", "Edit a text file",
                "Replace exact text in a UTF-8 file beneath the workspace (at most " + limits.fileMaxBytes() / 1024
                        + " KiB). old_text "
                        + "must occur exactly expected_replacements times (default 1); otherwise nothing changes and the "
                        + "error says how many matched. The file is replaced atomically and the result carries a unified diff."
                        + DiskFloorText.refusesWrites(limits),
                INPUT_SCHEMA.formatted(Names.MAX_PATH_CHARS), OUTPUT_SCHEMA.formatted(limits.diffChars() / 1024), Hints.destructive())
                .target("path")
                .instructions("edit_file: replaces exact text (old_text must match expected_replacements times, default 1) "
                        + "and returns a unified diff; prefer it to rewriting whole files.");
    }

    private final Workspace workspace;
    private final int maxBytes;
    private final int diffChars;
    private final DiskFloor floor;

    EditFileTool(Workspace workspace, Limits limits) {
        super(spec(limits));
        this.workspace = workspace;
        this.maxBytes = limits.fileMaxBytes();
        this.diffChars = limits.diffChars();
        this.floor = DiskFloor.of(limits);
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal {
        String path = arguments.requiredString("path");
        String oldText = arguments.requiredString("old_text");
        String newText = arguments.requiredString("new_text");
        long expected = arguments.optionalInteger("expected_replacements", 1);
        if (oldText.isEmpty()) {
            throw new ToolRefusal("old_text is empty; give the exact text to replace");
        }
        if (expected < 1) {
            throw new ToolRefusal("expected_replacements must be at least 1");
        }
        try {
            byte[] original = workspace.readFile(path, maxBytes);
            String before = TextDecoding.decode(original);
            if (before == null) {
                throw new ToolRefusal(TextDecoding.notUtf8(path));
            }
            int matches = count(before, oldText);
            if (matches == 0) {
                throw new ToolRefusal("old_text was not found in " + Names.quoted(path) + "; nothing was changed. "
                        + "Read the file again and copy the text exactly, whitespace included.");
            }
            if (matches != expected) {
                throw new ToolRefusal("old_text matches " + matches + " times in " + Names.quoted(path)
                        + ", expected "
                        + expected + "; nothing was changed. Add context to make it unique, or set expected_replacements="
                        + matches + " to replace all.");
            }
            byte[] oldBytes = TextDecoding.encode(oldText);
            byte[] newBytes = TextDecoding.encode(newText);
            if (oldBytes == null || newBytes == null) {
                throw notUnicode();
            }
            // Sized before it is built: many matches times a long new_text would otherwise ask
            // for gigabytes and take the server down.
            long growth = (long) matches * (newBytes.length - oldBytes.length);
            if (original.length + growth > maxBytes) {
                throw tooLarge(original.length + growth);
            }
            String after = before.replace(oldText, newText);
            byte[] bytes = TextDecoding.encode(after);
            if (bytes == null) {
                throw notUnicode();
            }
            if (bytes.length > maxBytes) {
                throw tooLarge(bytes.length);
            }
            DiskFloorText.refuseBelow(floor, workspace.root(), bytes.length, "changed");
            workspace.replaceIfUnchanged(path, original, bytes);
            EditDiff diff = EditDiff.of(path, before, after, diffChars);
            Map<String, Object> structured = new LinkedHashMap<>();
            structured.put("path", path);
            structured.put("replacements", matches);
            structured.put("diff", diff.text());
            structured.put("diff_truncated", diff.truncated());
            structured.put("bytes", bytes.length);
            return ToolResponse.success("replaced " + matches + " occurrence" + (matches == 1 ? "" : "s") + " in "
                    + Names.display(path) + "\n" + diff.text(), structured, path, (long) bytes.length);
        } catch (IOException e) {
            throw WorkspaceErrors.refusal(path, "edit", e);
        }
    }

    private static ToolRefusal notUnicode() {
        return new ToolRefusal("old_text, new_text or the edited file is not valid Unicode text (an unpaired "
                + "surrogate escape?); nothing was changed");
    }

    private ToolRefusal tooLarge(long bytes) {
        return new ToolRefusal("the edited file would be " + bytes + " bytes, over the limit of " + maxBytes
                + "; nothing was changed");
    }

    static int count(String text, String needle) {
        int count = 0;
        for (int at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length())) {
            count++;
        }
        return count;
    }
}
