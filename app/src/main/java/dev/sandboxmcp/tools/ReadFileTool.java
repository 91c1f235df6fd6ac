package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.workspace.Workspace;
import dev.sandboxmcp.workspace.WorkspaceException;
import java.io.IOException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnmappableCharacterException;
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
                "has_more": {"type": "boolean", "description": "Whether lines follow the ones returned."}
              },
              "required": ["path", "content", "bytes", "first_line", "lines", "total_lines", "has_more"]
            }""";

    private final Workspace workspace;
    private final int maxBytes;

    public ReadFileTool(Workspace workspace, Limits limits) {
        this.workspace = workspace;
        this.maxBytes = limits.fileMaxBytes();
        super(Schemas.tool("read_file", "Read a text file",
                "Read a UTF-8 text file beneath the workspace. Without offset/limit the whole file is returned (at most "
                        + limits.fileMaxBytes() / 1024 + " KiB); with them, a page of lines of any file, with the total line count and "
                        + "whether more follows. Paths are relative to the workspace root and cannot leave it.",
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
            return ToolResponse.failure(path, "could not read '" + path + "': " + e.getMessage());
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
        return respond(path, content, bytes.length, 1, lines, lines, false);
    }

    /** Lines [first, first + limit) of a file of any size, cut at the size limit; counts all lines. */
    private ToolResponse page(String path, long first, long limit) throws IOException {
        StringBuilder page = new StringBuilder();
        long pageBytes = 0;
        long returned = 0;
        long lineNumber = 0;
        boolean cutBySize = false;
        try (Reader reader = new BufferedReader(new InputStreamReader(workspace.openFile(path), TextDecoding.strictDecoder()), 1 << 16)) {
            StringBuilder line = new StringBuilder();
            int c;
            boolean pending = false;
            while (true) {
                c = reader.read();
                if (c == 0) {
                    return ToolResponse.failure(path, TextDecoding.binary(path));
                }
                if (c >= 0) {
                    pending = true;
                    if (lineNumber + 1 >= first && returned < limit && !cutBySize) {
                        line.append((char) c);
                    }
                }
                if (c == '\n' || (c < 0 && pending)) {
                    lineNumber++;
                    pending = false;
                    if (!line.isEmpty()) {
                        long lineBytes = line.toString().getBytes(StandardCharsets.UTF_8).length;
                        if (pageBytes + lineBytes > maxBytes) {
                            cutBySize = true;
                        } else {
                            page.append(line);
                            pageBytes += lineBytes;
                            returned++;
                        }
                        line.setLength(0);
                    }
                }
                if (c < 0) {
                    break;
                }
            }
        } catch (MalformedInputException | UnmappableCharacterException e) {
            return ToolResponse.failure(path, TextDecoding.notUtf8(path));
        }
        if (first > lineNumber && lineNumber > 0) {
            return ToolResponse.failure(path, "offset " + first + " is past the end: '" + path + "' has " + lineNumber + " lines");
        }
        boolean hasMore = first + returned - 1 < lineNumber;
        return respond(path, page.toString(), pageBytes, first, returned, lineNumber, hasMore);
    }

    private static ToolResponse respond(String path, String content, long bytes, long first, long lines, long total,
            boolean hasMore) {
        Map<String, Object> structured = new LinkedHashMap<>();
        structured.put("path", path);
        structured.put("content", content);
        structured.put("bytes", bytes);
        structured.put("first_line", first);
        structured.put("lines", lines);
        structured.put("total_lines", total);
        structured.put("has_more", hasMore);
        String text = hasMore || first > 1
                ? content + (content.endsWith("\n") || content.isEmpty() ? "" : "\n") + "[lines " + first + "-"
                        + (first + lines - 1) + " of " + total + (hasMore ? "; more follows: call again with offset="
                        + (first + lines) : "") + "]"
                : content;
        return ToolResponse.success(text, structured, path, bytes);
    }

    static long countLines(String text) {
        long lines = text.chars().filter(c -> c == '\n').count();
        return text.isEmpty() || text.endsWith("\n") ? lines : lines + 1;
    }
}
