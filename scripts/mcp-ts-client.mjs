// Speaks to `researchtui mcp` over stdio with the official TypeScript SDK
// client (@modelcontextprotocol/sdk), as Claude Desktop, Cursor and VS Code
// do. Run by scripts/mcp-ts-client.sh, which starts the fakes and sets the
// environment; on its own: node mcp-ts-client.mjs /path/to/researchtui
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const bin = process.argv[2] || "researchtui";
let failures = 0;
const check = (ok, what, detail = "") => {
  console.log(`${ok ? "PASS" : "FAIL"}  ${what}${detail ? "  " + detail : ""}`);
  if (!ok) failures++;
};
const textOf = (res) => (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");

const transport = new StdioClientTransport({ command: bin, args: ["mcp"], env: process.env, stderr: "inherit" });
const client = new Client({ name: "ts-sdk-check", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(["cancel_session", "follow_up", "get_session", "list_sessions", "research", "resume_session", "search_knowledge", "start_research"].every((n) => names.includes(n)),
  "tools/list", names.join(", "));
check(tools.every((t) => t.description && Object.values(t.inputSchema.properties || {}).every((p) => p.description)),
  "every tool and input field described");

const progress = [];
const res = await client.callTool(
  { name: "research", arguments: { question: "How is software testing studied?", sources: ["arxiv", "openalex"] } },
  undefined,
  { onprogress: (p) => progress.push(p.message), timeout: 300000 },
);
const out = res.structuredContent || {};
check(!res.isError && out.status === "completed", "research completes", `session ${out.session_id}, status ${out.status}`);
check(progress.length > 0, "research sends progress notifications", `${progress.length}, first: ${progress[0]}`);
const refs = new Set((out.references || []).map((r) => r.n));
const cited = [...(out.report || "").matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
check(cited.length > 0 && cited.every((n) => refs.has(n)), "every [n] in the report resolves to a reference",
  `${cited.length} citations, ${refs.size} references`);

const found = await client.callTool({ name: "search_knowledge", arguments: { query: "software testing", k: 5 } });
const passages = (found.structuredContent || {}).passages || [];
check(!found.isError && passages.some((p) => (p.sessions || []).includes(out.session_id)),
  "search_knowledge finds the session's passages", `${passages.length} passages`);

const bad = [
  ["research", { question: "" }],
  ["research", { question: "x".repeat(5000) }],
  ["get_session", { id: "no-such-session" }],
  ["research", { question: "fine question", sources: ["myspace"] }],
  ["search_knowledge", { query: "x", k: 500 }],
];
for (const [name, args] of bad) {
  try {
    const r = await client.callTool({ name, arguments: args });
    check(r.isError === true, `bad input is an isError result: ${name} ${JSON.stringify(args).slice(0, 60)}`, textOf(r).slice(0, 100));
  } catch (e) {
    check(false, `bad input is an isError result: ${name}`, `protocol error: ${e.message}`);
  }
}
const after = await client.callTool({ name: "list_sessions", arguments: {} });
check(!after.isError && (after.structuredContent.sessions || []).length === 1, "the server keeps serving after bad input");

const { resources } = await client.listResources();
const uri = `researchtui://sessions/${out.session_id}/report`;
check(resources.some((r) => r.uri === uri), "the report is listed as a resource", uri);
const read = await client.readResource({ uri });
check(read.contents[0].text === out.report, "the report resource reads back");

// Long jobs (issue 29): start_research returns at once; get_session shows the
// run's progress until it completes; a second run, whose review waits for a
// person, is cancelled, and a subscriber of its report hears that it changed.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const poll = async (id, done, what) => {
  for (let i = 0; i < 600; i++) { // 600 × 0.5 s: a guard, not a timing
    const v = (await client.callTool({ name: "get_session", arguments: { id } })).structuredContent || {};
    if (done(v)) return v;
    await sleep(500);
  }
  check(false, what, "never happened");
  return {};
};
const updates = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
const start = async (args) => (await client.callTool({ name: "start_research", arguments: args })).structuredContent || {};
const a = await start({ question: "How is software testing studied?", sources: ["arxiv", "openalex"] });
check(a.status === "running" && a.session_id, "start_research returns the session at once", a.session_id);
let sawProgress = false;
const doneA = await poll(a.session_id, (v) => {
  if (v.progress && v.progress.stage) sawProgress = true;
  return v.session && v.session.status !== "running";
}, "the started run ends");
check(doneA.session && doneA.session.status === "completed" && (doneA.report || "").includes("## References"),
  "start_research's run completes with a report", doneA.session && doneA.session.status);
check(sawProgress, "get_session showed the run's progress while it ran");

const b = await start({ question: "Which methods detect CRISPR off-target edits?", sources: ["arxiv", "openalex"], review: "ask" });
await client.subscribeResource({ uri: b.report_uri });
const waiting = await poll(b.session_id, (v) => v.progress && v.progress.review, "the second run's review waits");
check(!!(waiting.progress && waiting.progress.review), "get_session shows the review waiting",
  waiting.progress && `stage ${waiting.progress.stage}, ${waiting.progress.sources_found} sources, ${waiting.progress.tokens.completion_tokens} tokens`);
const cancelled = await client.callTool({ name: "cancel_session", arguments: { id: b.session_id } });
check(!cancelled.isError && cancelled.structuredContent.status !== "running", "cancel_session stops the run", textOf(cancelled));
for (let i = 0; i < 100 && !updates.includes(b.report_uri); i++) await sleep(100);
check(updates.includes(b.report_uri), "the subscriber hears notifications/resources/updated", updates.join(", "));

await client.close();
console.log(failures ? `${failures} check(s) failed` : "all checks passed");
process.exit(failures ? 1 : 0);
