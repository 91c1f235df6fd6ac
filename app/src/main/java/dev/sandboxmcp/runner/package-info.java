/**
 * The channel between the server (HTTP, auth, MCP, audit; holds the token's digest) and the
 * runner (the workspace, commands and jobs), which run in two containers with different users,
 * PID namespaces, cgroups and networks. The server listens; the runner connects out, proves
 * itself, and then one connection carries every call, multiplexed by id.
 *
 * <pre>
 *   server container                                     runner container (network: none)
 *   ToolDispatcher -> RunnerLink <- ChannelListener <==== runner.sock ==== RunnerAgent -> tools
 *                                   (listens, in the channel volume: the server's; the runner
 *                                    mounts it read-only, so no command can move, delete,
 *                                    replace or shadow the socket)
 *                     TicketOffice -> ticket, runner.lock, runner.state (same volume)
 * </pre>
 *
 * <h2>The protocol is its table ({@link dev.sandboxmcp.runner.Protocol#TABLE})</h2>
 * One JSON object per line (UTF-8), its first field {@code kind}; each kind is a record in
 * {@code Protocol} with its checks, encoder and decoder side by side.
 * <pre>
 *   kind      sent by  phase        fields (checks)
 *   hello     runner   hello        version (= 1), secret (64 hex digits, this start's)
 *   welcome   server   hello        limits (every limit of config.Limits by name, each within its
 *                                   declared range, each once): the runner builds its tools from
 *                                   the first, and gives up if a later one differs
 *   refused   server   hello        reason (<= 200 chars); the runner exits, its container restarts
 *   call      server   established  id (> 0), tool (<= 64 chars), progress (whether the client
 *                                     listens for it), arguments (an object)
 *   cancel    server   established  id; interrupts that call (its command tree is killed)
 *   ping      server   established  id
 *   progress  runner   established  id, done, total (or null), message (<= 200 chars)
 *   reply     runner   established  id, error, text, structured (an object; required unless error),
 *                                   exit_code, bytes (>= 0), timed_out
 *   pong      runner   established  id, failed (<= 16 names of <= 64 chars)
 * </pre>
 * Anything else is a violation: a kind of the other side or out of its phase, an unknown or
 * repeated field, a wrong type, a value out of range, a second value on the line. Every line is
 * parsed with Jackson's streaming parser within {@link dev.sandboxmcp.runner.Bounds}: bytes
 * (the server reads at most {@code Bounds.maxReplyBytes} of a runner's line, the runner at most a
 * request body and 64 KiB of the server's; a hello at most 1 KiB), nesting depth (64), tokens (32
 * per listing entry at the cap, plus 64 Ki) and string length; arguments and structured results
 * pass through as trees built within those bounds. The server holds a call to the runner's
 * bounds as it encodes it (counting what the runner's parser would count, not parsing it again),
 * so a token holder's oversized call is a tool error, never a broken connection. A violation from the runner closes its connection and fails its calls in flight;
 * answers to ids nothing waits for (after a deadline or cancel) are dropped. A call given up
 * (deadline, cancel) whose line is still queued here is taken back and never sent; one already
 * sent gets a cancel; an answer or progress for a call whose line is still queued here (ids are
 * a count, easy to guess) is a violation. So a runner that stops reading leaves only live calls'
 * lines in the server's memory. A welcome is read within 16 KiB. A runner's line longer than
 * 64 KiB holds its cost in the server's heap budget (the HTTP bodies' own, {@code HeapBudget})
 * before it is parsed, kept by its call's request until answered; one that finds no room is not
 * parsed (only its id is read) and fails its call with a clear error. The runner encodes and
 * writes one large answer at a time, and sends an answer longer than the server reads (a
 * listing of many jobs with long commands; pages are bounded far within it) as a tool error.
 *
 * <h2>The limits travel one way</h2>
 * The server owns the one configuration and states every limit in its welcome; the runner reads
 * none from its environment and states none (a hello carries only its version and secret). The
 * server's bounds on what it reads from the runner derive from its own limits before any runner
 * connects, so nothing a runner taken over sends can raise them ({@code StatedLimitsTest}).
 *
 * <h2>Who may connect</h2>
 * A connection's first line must be a hello with this start's secret within 2 s
 * ({@code ChannelListener.HELLO_DEADLINE}); at most 8 connections wait for theirs at once
 * ({@code MAX_UNPROVEN}), the rest are closed at once; a refused connection keeps its place until
 * it is closed. One that sent a wrong line is told why; refusals are logged at the 1st, 2nd, 4th,
 * 8th... of their kind (a wrong line, or none) with their count, so that a command connecting in
 * a loop cannot push the audit out of the container's log. A deadline is let go of as soon as
 * its hello arrives or its connection ends. The secret comes to the runner before any command can exist (commands only come
 * through a runner that proved itself): in the containers as a one-time ticket file that
 * {@code TicketOffice} publishes only while no runner is connected and the runner's lock
 * ({@code runner.lock}: a shared flock that the runner's init, PID 1 of its container, takes on a
 * read-only open once the ticket is there and before it starts the JVM, and holds until it has
 * exited; {@code Flock}) has been free for 1.5 s ({@code Main.TICKET_GRACE}; on a new channel
 * volume, where no runner ever had a secret, at once), and deletes the moment a runner proves
 * itself, before that runner's first call; as the server's child (ChildRunner) as the first line
 * of its standard input, a pipe no command inherits (commands get only descriptors 0-2 of their
 * own). The runner is non-dumpable before it reads the secret, so no command (its user) can read
 * its memory or environment; the secret is in no file a command can open, no environment and no
 * command line. A new secret for each start of the runner: each ticket and each child start
 * rotates it.
 *
 * <h2>The attacks, from a command's side (tested: {@code ChannelTakeoverTest} in tests/e2e,
 * {@code ChannelTest}, {@code TicketOfficeTest}, {@code HostileRunnerOverHttpTest})</h2>
 * <ul>
 * <li>Rename, delete, replace or shadow the socket, or plant a ticket: the volume is read-only
 *     in the runner's container (EROFS).</li>
 * <li>Connect and speak: without the secret a connection is refused and logged; a call before a
 *     hello is a violation; the hello line is bounded (1 KiB) and has a deadline (2 s).</li>
 * <li>Flood with connections: 8 wait for their hello at most; the rest are closed at once and
 *     counted in the log. A flood only delays a live runner's reconnect, which retries.</li>
 * <li>Search for the secret: the ticket is gone before the first command; the runner's
 *     {@code /proc/<pid>/mem} and {@code environ} are closed to its own user (non-dumpable); no
 *     command line or environment holds it.</li>
 * <li>Kill the runner (same user), then read the next ticket: the runner's container ends with
 *     it (its init exits, the kernel kills every process of the PID namespace), and the ticket is
 *     only published after the runner's lock has been free for 1.5 s ({@code TicketOfficeTest}),
 *     so no command of the dead runner is left to read it. The lock is the init's, not the JVM's:
 *     a command can starve the init ({@code chrt --idle -p 0 1} or {@code renice 19 -p 1}, then
 *     busy loops) so that it notices the JVM's death only seconds later, but the init's lock frees
 *     only as the init exits, when the kernel kills the rest of the namespace. A POSIX record
 *     lock does not count (the server looks with flock). A command that takes the lock itself
 *     only delays the next ticket while it lives, and it dies with the container.</li>
 * <li>Restart the server (or outlive it) while the runner and its commands live: the new server
 *     has a new secret and publishes no ticket while the lock is held; the runner's reconnect is
 *     refused, it exits, its container restarts, and only then is a ticket published.</li>
 * <li>Take the runner over (a command controls the runner's process some other way): the server
 *     trusts nothing it sends; every message kind answered with the worst input (a line at the
 *     byte bound full of {@code {}}, 10,000-deep nesting, a million keys, a huge string, garbage,
 *     a trickle, silence) is a clear tool error, and /healthz keeps answering, at -Xmx128m.</li>
 * </ul>
 * As the server's child ({@code make run}, the tests) the runner is the server's user: there is
 * no read-only mount, and a command could replace the socket in the private directory; it still
 * cannot read the secret (the pipe, non-dumpable processes), so a runner it does not control is
 * the only one the server takes.
 */
package dev.sandboxmcp.runner;
