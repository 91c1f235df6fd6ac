// Interop check with the TypeScript MCP SDK client (what Poke uses).
// Usage: node interop.mjs <sdk-dir> <base-url> <token> [--across-restart]
//   base-url: e.g. http://127.0.0.1:18080/mcp-sandbox
// Connects over Streamable HTTP and over SSE with a bearer header, lists the tools, calls each
// one, checks a wrong token is refused, and exits non-zero on the first failure.
// With --across-restart it instead connects over Streamable HTTP, calls a tool, prints
// "READY", waits for a line on stdin (the caller restarts the server meanwhile), and calls
// again on the same client, proving that a client carries on across a server restart.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, baseUrl, token, mode] = process.argv.slice(2);
if (!sdkDir || !baseUrl || !token) {
  console.error("usage: node interop.mjs <sdk-dir> <base-url> <token>");
  process.exit(2);
}

const sdk = (file) =>
  import(pathToFileURL(path.resolve(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", file)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { SSEClientTransport } = await sdk("client/sse.js");
const version = (await import(pathToFileURL(path.resolve(sdkDir, "node_modules/@modelcontextprotocol/sdk/package.json")).href,
  { with: { type: "json" } })).default.version;

function transportFor(kind, bearer) {
  const headers = { Authorization: `Bearer ${bearer}` };
  if (kind === "streamable") {
    return new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } });
  }
  return new SSEClientTransport(new URL(`${baseUrl}/sse`), {
    requestInit: { headers },
    eventSourceInit: {
      fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers ?? {}), ...headers } }),
    },
  });
}

function check(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

async function exercise(kind) {
  const client = new Client({ name: "sandbox-mcp-interop", version: "1.0.0" });
  await client.connect(transportFor(kind, token));
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    // The catalog's names, from the test that runs this script (ToolCatalog.names()): never a second list here.
    const expected = (process.env.SANDBOX_MCP_TOOLS ?? "").split(",").filter((name) => name).sort();
    check(expected.length > 0, "SANDBOX_MCP_TOOLS names the tools to expect");
    check(JSON.stringify(tools) === JSON.stringify(expected), `tools/list returned ${tools}`);

    const file = `interop-${kind}-${process.pid}.txt`;
    const written = await client.callTool({ name: "write_file", arguments: { path: file, content: `hello ${kind}\n` } });
    check(!written.isError, `write_file failed: ${JSON.stringify(written.content)}`);
    check(written.structuredContent?.bytes_written === `hello ${kind}\n`.length, "write_file structured result");

    const read = await client.callTool({ name: "read_file", arguments: { path: file } });
    check(!read.isError && read.structuredContent?.content === `hello ${kind}\n`, `read_file: ${JSON.stringify(read)}`);

    const page = await client.callTool({ name: "read_file", arguments: { path: file, offset: 1, limit: 1 } });
    check(!page.isError && page.structuredContent?.total_lines === 1 && page.structuredContent?.has_more === false,
      `read_file page: ${JSON.stringify(page)}`);

    const edit = await client.callTool({ name: "edit_file", arguments: { path: file, old_text: "hello", new_text: "bye" } });
    check(!edit.isError && edit.structuredContent?.replacements === 1 && edit.structuredContent?.diff.includes(`+bye ${kind}`),
      `edit_file: ${JSON.stringify(edit)}`);

    const list = await client.callTool({ name: "list_directory", arguments: { path: "." } });
    check(!list.isError && list.structuredContent?.entries.some((e) => e.path === file && e.kind === "file"),
      `list_directory: ${JSON.stringify(list)}`);

    const run = await client.callTool({ name: "run_command", arguments: { command: `cat ${file}; rm ${file}` } });
    check(!run.isError && run.structuredContent?.exit_code === 0 && run.structuredContent?.stdout === `bye ${kind}\n`,
      `run_command: ${JSON.stringify(run)}`);

    const job = await client.callTool({ name: "start_job", arguments: { command: `echo job-${kind}` } });
    check(!job.isError && job.structuredContent?.id, `start_job: ${JSON.stringify(job)}`);
    let output;
    for (let i = 0; i < 100; i++) {
      output = await client.callTool({ name: "job_output", arguments: { id: job.structuredContent.id } });
      if (output.structuredContent?.running === false) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    check(output.structuredContent?.output === `job-${kind}\n` && output.structuredContent?.exit_code === 0,
      `job_output: ${JSON.stringify(output)}`);
    const jobs = await client.callTool({ name: "list_jobs", arguments: {} });
    check(jobs.structuredContent?.jobs.some((j) => j.id === job.structuredContent.id), `list_jobs: ${JSON.stringify(jobs)}`);
    const stop = await client.callTool({ name: "stop_job", arguments: { id: job.structuredContent.id } });
    check(!stop.isError && stop.structuredContent?.running === false, `stop_job: ${JSON.stringify(stop)}`);

    const escape = await client.callTool({ name: "read_file", arguments: { path: "../../etc/passwd" } });
    check(escape.isError === true, "an escaping path must be a tool error");
  } finally {
    await client.close();
  }

  const intruder = new Client({ name: "intruder", version: "1.0.0" });
  let refused = false;
  try {
    await intruder.connect(transportFor(kind, "wrong-token-wrong-token-wrong-token-0000"));
    await intruder.listTools();
  } catch (e) {
    refused = /401|nauthorized/.test(String(e?.message ?? e) + String(e?.code ?? ""));
  } finally {
    await intruder.close().catch(() => {});
  }
  check(refused, `${kind}: a wrong token must be refused with 401`);
  console.log(`ok ${kind} sdk=${version}`);
}

async function acrossRestart() {
  const client = new Client({ name: "sandbox-mcp-interop", version: "1.0.0" });
  await client.connect(transportFor("streamable", token));
  const before = await client.callTool({ name: "run_command", arguments: { command: "echo before" } });
  check(before.structuredContent?.stdout === "before\n", `before restart: ${JSON.stringify(before)}`);
  console.log("READY");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  const after = await client.callTool({ name: "run_command", arguments: { command: "echo after" } });
  check(after.structuredContent?.stdout === "after\n", `after restart: ${JSON.stringify(after)}`);
  await client.close();
  console.log(`ok across-restart sdk=${version}`);
}

try {
  if (mode === "--across-restart") {
    await acrossRestart();
  } else {
    for (const kind of ["streamable", "sse"]) {
      await exercise(kind);
    }
  }
  process.exit(0);
} catch (e) {
  console.error(`FAIL sdk=${version}: ${e?.stack ?? e}`);
  process.exit(1);
}
