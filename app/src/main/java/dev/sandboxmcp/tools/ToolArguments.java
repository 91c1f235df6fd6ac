package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Typed access to a call's arguments, with errors that name the argument and what it must be. */
public final class ToolArguments {

    private final Map<String, Object> values;

    public ToolArguments(Map<String, Object> values) {
        this.values = values == null ? Map.of() : values;
    }

    public String requiredString(String name) throws ToolRefusal {
        Object value = values.get(name);
        if (value == null) {
            throw new ToolRefusal("missing required argument '" + name + "' (a string)");
        }
        if (!(value instanceof String text)) {
            throw new ToolRefusal("argument '" + name + "' must be a string");
        }
        return text;
    }

    /** A shell command line: not blank, without NUL bytes (no shell can take them), and short enough to exec. */
    public String requiredCommand(String name) throws ToolRefusal {
        String command = requiredString(name);
        if (command.isBlank()) {
            throw new ToolRefusal("argument '" + name + "' is empty; give a shell command line");
        }
        if (command.indexOf('\0') >= 0) {
            throw new ToolRefusal("argument '" + name + "' contains a NUL byte, which a shell cannot take");
        }
        int bytes = command.getBytes(StandardCharsets.UTF_8).length;
        if (bytes >= Limits.COMMAND_BYTES) {
            throw new ToolRefusal("argument '" + name + "' is " + bytes + " bytes; Linux takes at most "
                    + (Limits.COMMAND_BYTES - 1) + " in one argument. Write the script with write_file and run it with sh");
        }
        return command;
    }

    public String optionalString(String name, String fallback) throws ToolRefusal {
        return values.get(name) == null ? fallback : requiredString(name);
    }

    public long optionalInteger(String name, long fallback) throws ToolRefusal {
        Object value = values.get(name);
        if (value == null) {
            return fallback;
        }
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof Number number && number.doubleValue() == Math.rint(number.doubleValue())
                && Math.abs(number.doubleValue()) < 1e15) {
            return number.longValue();
        }
        throw new ToolRefusal("argument '" + name + "' must be a whole number");
    }

    public boolean optionalBoolean(String name, boolean fallback) throws ToolRefusal {
        Object value = values.get(name);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof Boolean flag)) {
            throw new ToolRefusal("argument '" + name + "' must be true or false");
        }
        return flag;
    }
}
