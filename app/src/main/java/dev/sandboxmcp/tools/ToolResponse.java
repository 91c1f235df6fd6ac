package dev.sandboxmcp.tools;

import java.util.Map;

/**
 * What a tool hands back: the readable text, the structured result (null for errors), and the
 * facts the audit line records.
 *
 * @param target   the command or path the call was about
 * @param exitCode a command's exit code, null for file tools
 * @param bytes    bytes read, written or printed
 * @param timedOut whether a command hit its deadline
 */
public record ToolResponse(boolean error, String text, Map<String, Object> structured, String target,
        Integer exitCode, Long bytes, boolean timedOut) {

    public static ToolResponse success(String text, Map<String, Object> structured, String target, Long bytes) {
        return new ToolResponse(false, text, structured, target, null, bytes, false);
    }

    public static ToolResponse failure(String target, String message) {
        return new ToolResponse(true, message, null, target, null, null, false);
    }
}
