package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.OpenedFile;
import dev.sandboxmcp.workspace.Workspace;
import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code read_file}: the UTF-8 text of a file beneath the workspace. */
final class ReadFileTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": %d, "description": "Relative to the workspace root."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": %d,
                  "description": "Most lines to return (default %d, within %d KiB; with limit, %d KiB; as JSON escapes them)."},
                "tail": {"type": "integer", "minimum": 1, "maximum": %d,
                  "description": "The last N lines instead (logs), read from the end: first_line and total_lines are null."}
              },
              "required": ["path"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "bytes": {"type": "integer"},
                "first_line": {"type": ["integer", "null"]},
                "lines": {"type": "integer"},
                "total_lines": {"type": ["integer", "null"]},
                "total_lines_at_least": {"type": "boolean", "description": "total_lines is a lower bound: counting a large file to its end was not worth the call."},
                "has_more": {"type": "boolean", "description": "Lines follow (with tail: precede)."},
                "byte_offset": {"type": "integer", "description": "With tail: where content starts."},
                "line_truncated": {"type": "boolean", "description": "A line longer than a page was cut; the text says how to read the rest."},
                "line_bytes": {"type": "integer"},
                "rest_byte_offset": {"type": "integer"}
              },
              "required": ["path", "content", "bytes", "first_line", "lines", "total_lines", "has_more", "line_truncated"]
            }""";

    static ToolSpec spec(Limits limits) {
        return new ToolSpec("read_file", "Read a text file",
                "Read a UTF-8 text file in the workspace by pages of lines (default " + limits.pageLines() + " lines within "
                        + limits.pageBytes() / 1024 + " KiB as JSON escapes them), with the total line count and the offset "
                        + "of the next page; tail=N reads the last N lines. Paths are relative to the workspace root and "
                        + "cannot leave it.",
                INPUT_SCHEMA.formatted(Names.MAX_PATH_CHARS, limits.readLinesMax(), limits.pageLines(), limits.pageBytes() / 1024,
                        limits.fileMaxBytes() / 1024, limits.readLinesMax()),
                OUTPUT_SCHEMA, Hints.readOnly().idempotent())
                .target("path")
                .instructions("read_file: UTF-8 text in pages of " + limits.pageLines() + " lines within "
                        + limits.pageBytes() / 1024 + " KiB as JSON escapes them (offset, limit), with the total line count "
                        + "and the next offset; tail=N reads the last N lines of a log.");
    }

    private final Workspace workspace;
    private final LineIndexes indexes = new LineIndexes();
    private final int maxBytes;
    private final int pageBytes;
    private final int pageLines;

    ReadFileTool(Workspace workspace, Limits limits) {
        super(spec(limits));
        this.workspace = workspace;
        this.maxBytes = limits.fileMaxBytes();
        this.pageBytes = limits.pageBytes();
        this.pageLines = limits.pageLines();
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolRefusal {
        String path = arguments.requiredString("path");
        long offset = arguments.optionalInteger("offset", 0);
        long limit = arguments.optionalInteger("limit", 0);
        long tail = arguments.optionalInteger("tail", 0);
        if (offset < 0 || limit < 0 || tail < 0) {
            throw new ToolRefusal("offset, limit and tail must be positive line counts");
        }
        if (tail > 0 && (offset > 0 || limit > 0)) {
            throw new ToolRefusal("tail reads the last lines; it cannot be combined with offset or limit");
        }
        try {
            if (tail > 0) {
                return tail(path, tail);
            }
            return limit == 0 ? page(path, Math.max(offset, 1), pageLines, pageBytes)
                    : page(path, Math.max(offset, 1), limit, maxBytes);
        } catch (IOException e) {
            throw WorkspaceErrors.refusal(path, "read", e);
        }
    }

    /** Lines [first, first + limit) of a file of any size, at most {@code pageMax} bytes as JSON escapes them. */
    private ToolResponse page(String path, long first, long limit, int pageMax) throws IOException, ToolRefusal {
        LinePager.Result result;
        try (OpenedFile file = workspace.openFileVersion(path)) {
            LineIndex index = file.fileKey() == null ? new LineIndex()
                    : indexes.of(new LineIndexes.FileVersion(file.fileKey(), file.size(), file.modified(),
                            file.changed()));
            result = LinePager.read(file.channel(), file.size(), index, first, limit, pageMax);
        }
        return switch (result) {
            case LinePager.Binary binary -> throw new ToolRefusal(TextDecoding.binary(path));
            case LinePager.Page page -> {
                if (first > page.totalLines() && page.totalLines() > 0) {
                    throw new ToolRefusal("offset " + first + " is past the end: " + Names.quoted(path) + " has "
                            + page.totalLines() + " lines");
                }
                String content = TextDecoding.decode(page.content());
                if (content == null) {
                    throw new ToolRefusal(TextDecoding.notUtf8(path));
                }
                yield respond(path, content, first, page, pageMax);
            }
        };
    }

    /** The last {@code wanted} lines, read from the end of the file. */
    private ToolResponse tail(String path, long wanted) throws IOException, ToolRefusal {
        TailReader.Tail tail;
        try (SeekableByteChannel file = workspace.openFileChannel(path)) {
            tail = TailReader.read(file, wanted, pageBytes);
        }
        if (tail.binary()) {
            throw new ToolRefusal(TextDecoding.binary(path));
        }
        String content = TextDecoding.decode(tail.content());
        if (content == null) {
            throw new ToolRefusal(TextDecoding.notUtf8(path));
        }
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("path", path);
        structured.put("content", content);
        structured.put("bytes", (long) tail.content().length);
        structured.put("first_line", null);
        structured.put("lines", tail.lines());
        structured.put("total_lines", null);
        structured.put("has_more", tail.start() > 0);
        structured.put("line_truncated", tail.lineCut());
        structured.put("byte_offset", tail.start());
        StringBuilder text = new StringBuilder(content);
        if (!content.endsWith("\n") && !content.isEmpty()) {
            text.append('\n');
        }
        text.append("[last ").append(tail.lines()).append(" lines, from byte ").append(tail.start());
        if (tail.lineCut()) {
            text.append("; the first is only the end of a line longer than a page of ").append(pageBytes / 1024)
                    .append(" KiB as JSON escapes it");
        }
        if (tail.lines() < wanted && tail.start() > 0) {
            text.append("; fewer than asked: they fill a page of ").append(pageBytes / 1024)
                    .append(" KiB as JSON escapes them");
        }
        return ToolResponse.success(text.append(']').toString(), structured, path, (long) tail.content().length);
    }

    private ToolResponse respond(String path, String content, long first, LinePager.Page page, int pageMax) {
        long bytes = page.content().length;
        long lines = page.lines();
        boolean hasMore = page.hasMore();
        LinePager.CutLine cut = page.cut();
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("path", path);
        structured.put("content", content);
        structured.put("bytes", bytes);
        structured.put("first_line", first);
        structured.put("lines", lines);
        structured.put("total_lines", page.totalLines());
        structured.put("total_lines_at_least", !page.totalExact());
        structured.put("has_more", hasMore);
        structured.put("line_truncated", cut != null);
        if (cut != null) {
            structured.put("line_bytes", cut.bytes());
            structured.put("rest_byte_offset", cut.restOffset());
        }
        if (!hasMore && first == 1 && cut == null) {
            return ToolResponse.success(content, structured, path, bytes);
        }
        StringBuilder text = new StringBuilder(content);
        if (!content.endsWith("\n") && !content.isEmpty()) {
            text.append('\n');
        }
        if (cut != null) {
            text.append("[line ").append(cut.line()).append(" is ").append(cut.bytes()).append(" bytes, longer than a page of ")
                    .append(pageMax).append(" bytes (counted as JSON escapes them): cut after its first ")
                    .append(cut.kept()).append(" bytes. The rest starts at byte ")
                    .append(cut.restOffset()).append("; read it with run_command, e.g. tail -c +").append(cut.restOffset() + 1)
                    .append(' ').append(Names.display(shellWord(path))).append(" | head -c ").append(pageMax).append("]\n");
        }
        text.append("[lines ").append(first).append('-').append(first + lines - 1).append(" of ")
                .append(page.totalExact() ? "" : "at least ").append(page.totalLines());
        if (hasMore) {
            text.append("; more follows: call again with offset=").append(first + lines);
        }
        return ToolResponse.success(text.append(']').toString(), structured, path, bytes);
    }

    /** The path as one word for sh: single-quoted unless it is plainly safe. */
    static String shellWord(String path) {
        return path.matches("[A-Za-z0-9_./+-]+") ? path : "'" + path.replace("'", "'\\''") + "'";
    }
}
