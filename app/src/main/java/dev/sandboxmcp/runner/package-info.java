/**
 * The channel between the server (HTTP, auth, MCP, audit; holds the token's digest) and the
 * runner (the workspace, commands and jobs; holds no secret), which run in two containers with
 * different users, PID namespaces, cgroups and networks.
 *
 * <pre>
 *   server container                              runner container (network: none)
 *   ToolDispatcher -- validated call -->  RunnerClient ==== runner.sock ==== RunnerServer --> tools
 *                                          (a Unix socket on a volume only the two share)
 *
 *   one connection per call, one JSON object per line (UTF-8):
 *     server -> runner   {"v":1,"op":"call","tool":"read_file","arguments":{...}}
 *     runner -> server   {"v":1,"progress":{"done":5,"total":30,"message":"running for 5 s"}}   0..n
 *     runner -> server   {"v":1,"reply":{"error":false,"text":"...","structured":{...},...}}
 *   or
 *     server -> runner   {"v":1,"op":"ping"}
 *     runner -> server   {"v":1,"pong":{"failed":[]}}
 *   closing the connection before the reply cancels the call (its command tree is killed): the
 *   server does so when the client cancels (notifications/cancelled, or a dropped request). A
 *   run_command still running at the call budget is replied to at once (still_running, job_id)
 *   and goes on as a job; closing the connection after that reply cancels nothing.
 * </pre>
 *
 * <p>A command may take the runner over, so the server trusts nothing it reads from the socket:
 * every line is bounded in size, the whole exchange in time, and a reply is checked field by
 * field (and against the tool's output schema) before it becomes a tool result; anything else
 * is a clear tool error, never a crash or a stall of the server.
 */
package dev.sandboxmcp.runner;
