package dev.sandboxmcp.tools;

import dev.sandboxmcp.config.Limits;
import dev.sandboxmcp.exec.DiskFloor;
import dev.sandboxmcp.exec.DiskFloorStop;
import dev.sandboxmcp.exec.InodeFloorStop;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** The words for the disk floor: in the tools' descriptions, a stopped command or job, a refused write. */
final class DiskFloorText {

    /** The structured form of a stop, a property of run_command's result and of a job ({@link Endings#PROPERTIES}). */
    static final String PROPERTY = """
                "disk_floor": {"type": "object",
                  "description": "Present when the disk floor stopped it: free space on path was below floor_bytes, or free inodes below floor_inodes.",
                  "properties": {"path": {"type": "string"}, "free_bytes": {"type": "integer"},
                    "floor_bytes": {"type": "integer"}, "free_inodes": {"type": "integer"},
                    "floor_inodes": {"type": "integer"}}}""";

    private DiskFloorText() {
    }

    /**
     * Refuses a write of {@code bytes} to the workspace at {@code root} that would leave it below
     * {@code floor}, or already is ("nothing was {@code undone}").
     */
    static void refuseBelow(DiskFloor floor, Path root, long bytes, String undone) throws ToolRefusal {
        Optional<DiskFloorStop> low = floor.shortfall(root, bytes);
        if (low.isPresent()) {
            throw new ToolRefusal(refused(low.get(), bytes, undone));
        }
    }

    /** The sentence write_file's and edit_file's descriptions end with; empty with no floor. */
    static String refusesWrites(Limits limits) {
        String floor = describe(limits);
        return floor == null ? "" : " Refused when it would leave the workspace with less free space than the disk "
                + "floor (" + floor + ").";
    }

    /** The sentence run_command's and start_job's descriptions (and run_command's instructions) end with; empty with no floor. */
    static String stopsWriters(Limits limits) {
        String floor = describe(limits);
        return floor == null ? "" : " If the workspace or $HOME falls below the disk floor of free space (" + floor
                + "), the command writing is stopped and its result says so; below the same share of its inodes free, "
                + "every running command and job is, once files are still being made.";
    }

    /** The floor as the descriptions give it ("the larger of 2 GiB and 5 percent of the filesystem"); null when off. */
    static String describe(Limits limits) {
        DiskFloor floor = DiskFloor.of(limits);
        if (floor.off()) {
            return null;
        }
        String bytes = Endings.bytes(floor.minBytes());
        String share = floor.percent() + " percent of the filesystem";
        return floor.percent() == 0 ? bytes
                : floor.minBytes() == 0 ? share
                : "the larger of " + bytes + " and " + share;
    }

    /** Why the floor stopped a command or job, as {@link Endings#reason} gives it. */
    static String stopped(DiskFloorStop stop) {
        return "stopped: " + stop.path() + " had " + Endings.bytes(stop.freeBytes()) + " free, below the "
                + Endings.bytes(stop.floorBytes()) + " floor; free space, then run it again";
    }

    /** Why the inode floor stopped a command or job. */
    static String stopped(InodeFloorStop stop) {
        return "stopped: " + stop.path() + " had " + stop.freeInodes() + " inodes free (files it can still hold), below "
                + "the floor of " + stop.floorInodes() + ", and files were still being made while commands ran (by them, "
                + "or by anything else on that filesystem): every running command and job was stopped; remove files "
                + "you made (build outputs, caches), then run it again";
    }

    /**
     * Why write_file or edit_file did nothing ("nothing was {@code undone}"): {@code bytes} would
     * have gone below the floor, or it already was.
     */
    static String refused(DiskFloorStop stop, long bytes, String undone) {
        String where = stop.freeBytes() < stop.floorBytes()
                ? stop.path() + " has " + Endings.bytes(stop.freeBytes()) + " free, below the "
                        + Endings.bytes(stop.floorBytes()) + " floor"
                : "writing " + Endings.bytes(bytes) + " would leave " + stop.path() + " with less than its "
                        + Endings.bytes(stop.floorBytes()) + " floor free (it has " + Endings.bytes(stop.freeBytes()) + ")";
        return "refused: " + where + "; nothing was " + undone + ". Free space (remove build outputs or caches you made), "
                + "then try again";
    }

    static Map<String, Object> structured(DiskFloorStop stop) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("path", stop.path().toString());
        map.put("free_bytes", stop.freeBytes());
        map.put("floor_bytes", stop.floorBytes());
        return map;
    }

    static Map<String, Object> structured(InodeFloorStop stop) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("path", stop.path().toString());
        map.put("free_inodes", stop.freeInodes());
        map.put("floor_inodes", stop.floorInodes());
        return map;
    }
}
