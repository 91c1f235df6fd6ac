package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Names;
import dev.sandboxmcp.workspace.Workspace;
import dev.sandboxmcp.workspace.WorkspaceException;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code read_file}: the UTF-8 text of a file beneath the workspace. */
public final class ReadFileTool extends DefinedTool {

    private static final String INPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string", "minLength": 1,
                  "description": "File path relative to the workspace root, e.g. 'src/main.go'."},
                "offset": {"type": "integer", "minimum": 1,
                  "description": "First line to return (1 is the first line). With offset or limit the file is read in pages, whatever its size."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100000,
                  "description": "Most lines to return (default: as many as fit in the size limit)."}
              },
              "required": ["path"],
              "additionalProperties": false
            }""";

    private static final String OUTPUT_SCHEMA = """
            {
              "type": "object",
              "properties": {
                "path": {"type": "string"},
                "content": {"type": "string", "description": "The text of the lines returned, line endings kept."},
                "bytes": {"type": "integer", "description": "UTF-8 bytes of content."},
                "first_line": {"type": "integer", "description": "Number of the first line returned (1-based)."},
                "lines": {"type": "integer", "description": "Lines returned."},
                "total_lines": {"type": "integer", "description": "Lines in the whole file."},
                "has_more": {"type": "boolean", "description": "Whether lines follow the ones returned."},
                "line_truncated": {"type": "boolean",
                  "description": "The only line returned was longer than a page and was cut on a character boundary; read the rest by bytes from rest_byte_offset."},
                "line_bytes": {"type": "integer", "description": "With line_truncated: the whole line's size in bytes, line ending included."},
                "rest_byte_offset": {"type": "integer", "description": "With line_truncated: where the rest of the line starts, in bytes from the start of the file (0-based)."}
              },
              "required": ["path", "content", "bytes", "first_line", "lines", "total_lines", "has_more", "line_truncated"]
            }""";

    private final Workspace workspace;
    private final int maxBytes;

    public ReadFileTool(Workspace workspace, Limits limits) {
        this.workspace = workspace;
        this.maxBytes = limits.fileMaxBytes();
        super(Schemas.tool("read_file", "Read a text file",
                "Read a UTF-8 text file beneath the workspace. Without offset/limit the whole file is returned (at most "
                        + limits.fileMaxBytes() / 1024 + " KiB); with them, a page of lines of any file, with the total line count and "
                        + "whether more follows. A single line longer than a page is cut, and the result says where the rest "
                        + "starts in bytes. Paths are relative to the workspace root and cannot leave it.",
                INPUT_SCHEMA, OUTPUT_SCHEMA, Schemas.annotations("Read a text file", true, false, true, false)));
    }

    @Override
    public ToolResponse call(ToolArguments arguments, Progress progress) throws ToolInputException {
        String path = arguments.requiredString("path");
        long offset = arguments.optionalInteger("offset", 0);
        long limit = arguments.optionalInteger("limit", 0);
        if (offset < 0 || limit < 0) {
            throw new ToolInputException("offset and limit must be positive line counts");
        }
        try {
            return offset == 0 && limit == 0 ? whole(path) : page(path, Math.max(offset, 1), limit == 0 ? Long.MAX_VALUE : limit);
        } catch (WorkspaceException e) {
            String hint = e.reason() == WorkspaceException.Reason.TOO_LARGE
                    ? e.getMessage().replace("read part of it with run_command instead (head -c, tail, sed -n)",
                            "read it in pages with offset and limit (lines)")
                    : e.getMessage();
            return ToolResponse.failure(path, hint);
        } catch (IOException e) {
            return ToolResponse.failure(path, "could not read " + Names.quoted(path) + ": " + e.getMessage());
        }
    }

    private ToolResponse whole(String path) throws IOException {
        byte[] bytes = workspace.readFile(path, maxBytes);
        String content = TextDecoding.decode(bytes);
        if (content == null) {
            return ToolResponse.failure(path, TextDecoding.notUtf8(path));
        }
        if (content.indexOf('\0') >= 0) {
            return ToolResponse.failure(path, TextDecoding.binary(path));
        }
        long lines = countLines(content);
        return respond(path, content, bytes.length, 1, lines, lines, false, null);
    }

    /** Lines [first, first + limit) of a file of any size, at most a page of bytes; counts all lines. */
    private ToolResponse page(String path, long first, long limit) throws IOException {
        LinePager.Result result;
        try (InputStream in = workspace.openFile(path)) {
            result = LinePager.read(in, first, limit, maxBytes);
        }
        return switch (result) {
            case LinePager.Binary binary -> ToolResponse.failure(path, TextDecoding.binary(path));
            case LinePager.Page page -> {
                if (first > page.totalLines() && page.totalLines() > 0) {
                    yield ToolResponse.failure(path, "offset " + first + " is past the end: " + Names.quoted(path) + " has "
                            + page.totalLines() + " lines");
                }
                String content = TextDecoding.decode(page.content());
                if (content == null) {
                    yield ToolResponse.failure(path, TextDecoding.notUtf8(path));
                }
                boolean hasMore = first + page.lines() - 1 < page.totalLines();
                yield respond(path, content, page.content().length, first, page.lines(), page.totalLines(), hasMore,
                        page.cut());
            }
        };
    }

    private ToolResponse respond(String path, String content, long bytes, long first, long lines, long total,
            boolean hasMore, LinePager.CutLine cut) {
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("path", path);
        structured.put("content", content);
        structured.put("bytes", bytes);
        structured.put("first_line", first);
        structured.put("lines", lines);
        structured.put("total_lines", total);
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
                    .append(maxBytes).append(": cut after its first ").append(cut.kept()).append(" bytes. The rest starts at byte ")
                    .append(cut.restOffset()).append("; read it with run_command, e.g. tail -c +").append(cut.restOffset() + 1)
                    .append(' ').append(Names.display(shellWord(path))).append(" | head -c ").append(maxBytes).append("]\n");
        }
        text.append("[lines ").append(first).append('-').append(first + lines - 1).append(" of ").append(total);
        if (hasMore) {
            text.append("; more follows: call again with offset=").append(first + lines);
        }
        return ToolResponse.success(text.append(']').toString(), structured, path, bytes);
    }

    /** The path as one word for sh: single-quoted unless it is plainly safe. */
    static String shellWord(String path) {
        return path.matches("[A-Za-z0-9_./+-]+") ? path : "'" + path.replace("'", "'\\''") + "'";
    }

    static long countLines(String text) {
        long lines = text.chars().filter(c -> c == '\n').count();
        return text.isEmpty() || text.endsWith("\n") ? lines : lines + 1;
    }
}
