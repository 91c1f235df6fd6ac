// The call budget and cancellation, as Poke's client sees them (the TypeScript SDK with its
// default request timeout of 60 s), over Streamable HTTP and SSE at once.
// Usage: node budget.mjs <sdk-dir> <base-url> <token> <workspace-dir> <seconds-to-sleep> <grace-ms>
//   1. run_command "sleep <seconds>; echo done" with the client's default timeout: the result must come
//      before 60 s with still_running and a job_id, and job_output must later show "done" and exit 0.
//   2. run_command whose tree ignores SIGTERM, cancelled with an AbortSignal (the SDK sends
//      notifications/cancelled): its processes must be gone from /proc within the grace.
// Prints "ok <case> <transport> ..." lines; exits non-zero on the first failure.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, baseUrl, token, workspace, sleepSeconds, graceMs] = process.argv.slice(2);
const sdk = (file) =>
  import(pathToFileURL(path.resolve(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", file)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { SSEClientTransport } = await sdk("client/sse.js");
const { DEFAULT_REQUEST_TIMEOUT_MSEC } = await sdk("shared/protocol.js");

function transportFor(kind) {
  const headers = { Authorization: `Bearer ${token}` };
  if (kind === "streamable") {
    return new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } });
  }
  return new SSEClientTransport(new URL(`${baseUrl}/sse`), {
    requestInit: { headers },
    eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers ?? {}), ...headers } }) },
  });
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function running(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function connected(kind) {
  const client = new Client({ name: "sandbox-mcp-budget", version: "1.0.0" });
  await client.connect(transportFor(kind));
  return client;
}

async function budget(kind) {
  const client = await connected(kind);
  try {
    const started = Date.now();
    // No options: the SDK's default request timeout, as Poke calls.
    const result = await client.callTool({ name: "run_command",
      arguments: { command: `echo started; sleep ${sleepSeconds}; echo done`, timeout_seconds: Number(sleepSeconds) + 30 } });
    const elapsed = Date.now() - started;
    check(!result.isError, `${kind}: ${JSON.stringify(result)}`);
    check(elapsed < DEFAULT_REQUEST_TIMEOUT_MSEC, `${kind}: answered after ${elapsed} ms`);
    const call = result.structuredContent;
    check(call.still_running === true && typeof call.job_id === "string" && call.stdout === "started\n",
      `${kind}: ${JSON.stringify(call)}`);
    check(result.content[0].text.includes(`job_output {"id": "${call.job_id}"}`), `${kind}: the text names the next call`);
    let output;
    do {
      await sleep(1000);
      output = (await client.callTool({ name: "job_output", arguments: { id: call.job_id } })).structuredContent;
    } while (output.running && Date.now() - started < (Number(sleepSeconds) + 40) * 1000);
    check(output.running === false && output.exit_code === 0 && output.output === "started\ndone\n",
      `${kind}: job_output ${JSON.stringify(output)}`);
    console.log(`ok budget ${kind} answered_ms=${elapsed} total_ms=${Date.now() - started}`);
  } finally {
    await client.close();
  }
}

async function cancel(kind) {
  const client = await connected(kind);
  try {
    const pidFile = path.join(workspace, `cancel-${kind}.pid`);
    const aborter = new AbortController();
    const call = client.callTool({ name: "run_command",
      arguments: { command: `(trap '' TERM; sleep 300) & echo $! > cancel-${kind}.pid; sleep 300`, timeout_seconds: 120 } },
      undefined, { signal: aborter.signal }).then(() => "answered", (e) => `rejected: ${e}`);
    let pid;
    for (let i = 0; i < 200 && !pid; i++) {
      await sleep(25);
      pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, "utf8").trim()) || undefined : undefined;
    }
    check(pid, `${kind}: the command did not start`);
    const cancelled = Date.now();
    aborter.abort("the user cancelled");
    while (running(pid) && Date.now() - cancelled < Number(graceMs) + 5000) await sleep(20);
    const gone = Date.now() - cancelled;
    check(!running(pid), `${kind}: process ${pid} still running ${gone} ms after the cancel`);
    check(gone < Number(graceMs) + 2000, `${kind}: gone only after ${gone} ms (grace ${graceMs} ms)`);
    check((await call).startsWith("rejected"), `${kind}: the aborted call must reject`);
    const after = await client.callTool({ name: "run_command", arguments: { command: "echo alive" } });
    check(after.structuredContent?.stdout === "alive\n", `${kind}: the server must stay healthy`);
    console.log(`ok cancel ${kind} gone_ms=${gone}`);
  } finally {
    await client.close();
  }
}

try {
  await Promise.all(["streamable", "sse"].flatMap((kind) => [budget(kind), cancel(kind)]));
  process.exit(0);
} catch (e) {
  console.error(`FAIL: ${e?.stack ?? e}`);
  process.exit(1);
}
