package dev.sandboxmcp.exec;

/**
 * What {@link CommandRunner#run} gives back: the command finished ({@link CommandResult}), or it
 * still runs at its call's budget ({@link RunningCommand}), for the caller to hand over to a job.
 */
public sealed interface CommandOutcome permits CommandResult, RunningCommand {
}
