package dev.sandboxmcp.tools;

import dev.sandboxmcp.exec.DiskFloorStop;
import dev.sandboxmcp.exec.InodeFloorStop;
import dev.sandboxmcp.exec.Ending;
import dev.sandboxmcp.exec.Usage;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * How a command or job ended and what it took, worded once for every result that reports it
 * (run_command and the job tools): the structured fields, their schema, and the readable lines.
 */
final class Endings {

    /** The schema of {@link #put}'s fields, to be placed among a result's properties. */
    static final String PROPERTIES = """
                "usage": {"type": "object", "description": "What it took, once ended: CPU time of all its processes \
            (those reaped for it included), the largest resident memory of any one of them, bytes written to storage \
            (files, not pipes or /tmp). duration_ms is the wall time.",
                  "properties": {
                    "cpu_user_ms": {"type": "integer"},
                    "cpu_system_ms": {"type": "integer"},
                    "peak_rss_bytes": {"type": "integer"},
                    "peak_rss_is_upper_bound": {"type": "boolean", "description": "The largest process stayed at or \
            below this (the runner's own peak resident size, which the kernel counts into the shell's peak)."},
                    "written_bytes": {"type": "integer"}
                  }},
                "oom_killed": {"type": "boolean", "description": "The out-of-memory killer ended it (the sandbox's \
            memory limit, memory_limit_bytes, was reached)."},
                "memory_limit_bytes": {"type": ["integer", "null"]},
            """ + DiskFloorText.PROPERTY;

    private Endings() {
    }

    /** Adds the ending's usage and its out-of-memory verdict to {@code structured}; nothing while it runs. */
    static void put(Map<String, Object> structured, Ending ending) {
        if (ending == null) {
            return;
        }
        if (ending.usage() != null) {
            Usage usage = ending.usage();
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("cpu_user_ms", usage.userMicros() / 1000);
            fields.put("cpu_system_ms", usage.systemMicros() / 1000);
            fields.put("peak_rss_bytes", usage.peakRssKib() * 1024);
            fields.put("peak_rss_is_upper_bound", usage.peakIsBound());
            fields.put("written_bytes", usage.writtenBytes());
            structured.put("usage", fields);
        }
        boolean oom = ending.cause() instanceof Ending.OutOfMemory;
        structured.put("oom_killed", oom);
        if (ending.cause() instanceof Ending.OutOfMemory(Long limit)) {
            structured.put("memory_limit_bytes", limit);
        }
        if (ending.cause() instanceof DiskFloorStop stop) {
            structured.put("disk_floor", DiskFloorText.structured(stop));
        } else if (ending.cause() instanceof InodeFloorStop stop) {
            structured.put("disk_floor", DiskFloorText.structured(stop));
        }
    }

    /**
     * Why it ended, when that is something other than itself, its deadline or a stop (which each
     * tool words in its own headline): "killed by the out-of-memory killer (...)", "stopped: /workspace
     * had ... free, below the ... floor; ..."; else null.
     */
    static String reason(Ending ending) {
        return switch (ending.cause()) {
            case Ending.OutOfMemory(Long limit) -> "killed by the out-of-memory killer ("
                    + (limit == null ? "the sandbox ran out of memory" : "the sandbox's memory limit is " + bytes(limit))
                    + "; every command and job shares it: use less memory at once, or stop a job that holds it)";
            case DiskFloorStop stop -> DiskFloorText.stopped(stop);
            case InodeFloorStop stop -> DiskFloorText.stopped(stop);
            case Ending.Exited exited -> null;
            case Ending.TimedOut timedOut -> null;
            case Ending.Stopped stopped -> null;
        };
    }

    /** One readable line of what it took, or null when that is not known. */
    static String usageLine(Ending ending) {
        if (ending == null || ending.usage() == null) {
            return null;
        }
        Usage usage = ending.usage();
        return "took " + seconds(usage.userMicros() + usage.systemMicros()) + " of CPU (" + seconds(usage.userMicros())
                + " user, " + seconds(usage.systemMicros()) + " system) in " + seconds(ending.durationMillis() * 1000)
                + "; peak memory " + (usage.peakIsBound() ? "at most " : "") + bytes(usage.peakRssKib() * 1024)
                + " (the largest process" + (usage.peakIsBound() ? "; below the runner's own size it is not told apart"
                        : "") + "); "
                + bytes(usage.writtenBytes()) + " written to storage";
    }

    private static String seconds(long micros) {
        return String.format(Locale.ROOT, "%.2f s", micros / 1e6);
    }

    /**
     * {@code bytes} in the largest binary unit it fills, cut (never rounded up) to one decimal:
     * 1.9 GiB, 2 GiB, 512 KiB; so that 1.99 GiB free never reads as the 2 GiB floor.
     */
    static String bytes(long bytes) {
        String[] units = {"bytes", "KiB", "MiB", "GiB", "TiB"};
        int unit = 0;
        while (unit < units.length - 1 && bytes >= 1L << (10 * (unit + 1))) {
            unit++;
        }
        if (unit == 0) {
            return bytes + " bytes";
        }
        long tenths = bytes * 10 >> (10 * unit);
        return (tenths % 10 == 0 ? Long.toString(tenths / 10) : tenths / 10 + "." + tenths % 10) + " " + units[unit];
    }
}
