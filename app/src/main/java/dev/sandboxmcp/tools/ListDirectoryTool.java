package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.EscapedSize;
import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code list_directory}: names, kinds and sizes beneath a directory, links shown, never followed. */
final class ListDirectoryTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string", "maxLength": %d, "default": ".",
                  "description": "Directory relative to the workspace root (default: the root)."},
                "depth": {"type": "integer", "minimum": 1, "maximum": 3, "default": 1,
                  "description": "1 lists the directory's own entries; 2 and 3 go that many levels down."},
                "include_hidden": {"type": "boolean", "default": false, "description": "Include names starting with a dot."}
              },
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string"},
                "entries": {"type": "array", "items": {"type": "object", "properties": {
                  "path": {"type": "string", "description": "Relative to the listed directory."},
                  "kind": {"type": "string", "enum": ["file", "directory", "symlink", "other"]},
                  "size": {"type": "integer"},
                  "target": {"type": "string", "description": "For a symlink: the link's text (not followed)."},
                  "name_not_utf8": {"type": "boolean", "description": "Only when true: the name's bytes are not UTF-8; path shows them as U+FFFD, no tool can name the entry, and a directory is not descended into."}
                }, "required": ["path", "kind", "size"]}},
                "truncated": {"type": "boolean", "description": "Whether the entry cap or the size cap cut the listing."}
              },
              "required": ["path", "entries", "truncated"]
            }""";

    static ToolSpec spec(Limits limits) {
        return new ToolSpec("list_directory", "List a directory",
                "List names, kinds and sizes beneath a directory of the workspace, 1 to 3 levels deep, sorted by name, at most "
                        + limits.listEntries() + " entries and " + limits.resultTextBytes() / 1024 + " KiB as JSON (the result says "
                        + "when a cap cut it). Symbolic links are shown with their target and never followed.",
                INPUT_SCHEMA.formatted(Names.MAX_PATH_CHARS), OUTPUT_SCHEMA, Hints.readOnly().idempotent())
                .target("path")
                .instructions("list_directory: names, kinds and sizes, 1 to 3 levels deep; links are shown, not followed.");
    }

    /**
     * What one entry takes as JSON besides its names: its structured fields' keys, kind and size,
     * and its text line's end.
     */
    private static final int ENTRY_FIELDS_BYTES = 80;
    private static final int NOT_UTF8_FIELD_BYTES = "\"name_not_utf8\":true,".length();
    private static final String NOT_UTF8_NOTE = "  [name not UTF-8, shown with U+FFFD: no tool can name it (rename it with "
            + "run_command); a directory is not listed further]";

    private final Workspace workspace;
    private final int maxEntries;
    /**
     * The most a listing, its text and its entries together, takes as JSON ({@link
     * Limits#resultTextBytes}): long names at depth 3 (or names of control characters) reach it
     * before the entry cap.
     */
    private final long maxBytes;

    ListDirectoryTool(Workspace workspace, Limits limits) {
        super(spec(limits));
        this.workspace = workspace;
        this.maxEntries = limits.listEntries();
        this.maxBytes = limits.resultTextBytes();
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal {
        String path = arguments.optionalString("path", ".");
        long depth = arguments.optionalInteger("depth", 1);
        if (depth < 1 || depth > 3) {
            throw new ToolRefusal("depth must be 1, 2 or 3, got " + depth);
        }
        boolean hidden = arguments.optionalBoolean("include_hidden", false);
        Workspace.Listing listing;
        try {
            listing = workspace.list(path, (int) depth, hidden, maxEntries);
        } catch (IOException e) {
            throw WorkspaceErrors.refusal(path, "list", e);
        }
        List<Map<String, Object>> entries = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        long bytes = 0;
        boolean tooLarge = false;
        for (Workspace.Entry entry : listing.entries()) {
            String line = switch (entry.kind()) {
                case DIRECTORY -> Names.display(entry.path()) + "/";
                case SYMLINK -> Names.display(entry.path()) + " -> " + Names.display(entry.linkTarget());
                case FILE, OTHER -> Names.display(entry.path()) + "  (" + entry.size() + " bytes)";
            } + (entry.notUtf8() ? NOT_UTF8_NOTE : "");
            bytes += EscapedSize.of(line) + EscapedSize.of(entry.path()) + ENTRY_FIELDS_BYTES
                    + (entry.linkTarget() == null ? 0 : EscapedSize.of(entry.linkTarget()))
                    + (entry.notUtf8() ? NOT_UTF8_FIELD_BYTES : 0);
            if (bytes > maxBytes) {
                tooLarge = true;
                break;
            }
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("path", entry.path());
            item.put("kind", entry.kind().name().toLowerCase(Locale.ROOT));
            item.put("size", entry.size());
            if (entry.linkTarget() != null) {
                item.put("target", entry.linkTarget());
            }
            if (entry.notUtf8()) {
                item.put("name_not_utf8", true);
            }
            entries.add(item);
            text.append(line).append('\n');
        }
        if (tooLarge) {
            text.append("[cut at ").append(entries.size()).append(" entries, ").append(maxBytes / 1024)
                    .append(" KiB as JSON: list a subdirectory or use a smaller depth]\n");
        } else if (listing.truncated()) {
            text.append("[cut at ").append(maxEntries).append(" entries: list a subdirectory or use a smaller depth]\n");
        }
        if (entries.isEmpty()) {
            text.append("(empty)\n");
        }
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("path", path);
        structured.put("entries", entries);
        structured.put("truncated", tooLarge || listing.truncated());
        return ToolResponse.success(text.toString(), structured, path, (long) entries.size());
    }
}
