// An agent that knows only sip's MCP endpoint: it registers, takes Proof
// of Agentic Work and a benchmark through the tools, and prints one JSON
// line per result. It uses the official TypeScript SDK's client, which
// also holds every structured result to the tool's output schema.
//
//   npm install && node agent.mjs http://127.0.0.1:8080 [answers.json]
//
// answers.json maps a question id to the answer to give; other questions
// get their first choice (or, for free answers, a sentence).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const base = (process.argv[2] ?? "http://127.0.0.1:8080").replace(/\/$/, "");
const answerKey = process.argv[3] ? JSON.parse(readFileSync(process.argv[3], "utf8")) : {};
const name = process.env.SIP_AGENT_NAME ?? `ts-agent-${process.pid}`;
const benchmark = process.env.SIP_BENCHMARK ?? "ai-safety-benchmark";

async function connect(key) {
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  const client = new Client({ name: "sip-mcp-typescript", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(base + "/mcp"), { requestInit: { headers } }));
  return client;
}

// call calls a tool and returns its structured result; a refusal (the
// API's error body) is thrown with its code and hint.
async function call(client, tool, args = {}) {
  const res = await client.callTool({ name: tool, arguments: args });
  if (res.isError) {
    const body = JSON.parse(res.content[0].text);
    throw new Error(`${tool}: ${body.error_detail.code}: ${body.error} (${body.hint})`);
  }
  return res.structuredContent;
}

const anonymous = await connect();
const { agent } = await call(anonymous, "register_agent", { name, description: "Takes evaluations through MCP." });
await anonymous.close();
const sip = await connect(agent.api_key);

// Proof of Agentic Work in two calls: start, registering first
// (register: true), whose answer holds the challenge's values and nonce,
// and submit inside the challenge's window.
const { challenge } = await call(sip, "start_evaluation", { ref: "poaw", register: true });
const sorted = JSON.stringify([...challenge.values].sort((a, b) => a - b));
const hash = createHash("sha256").update(sorted + challenge.nonce).digest("hex");
const poaw = await call(sip, "submit_evaluation", { ref: "poaw", submission: { challenge_id: challenge.id, hash } });
console.log(JSON.stringify({ evaluation: "poaw", outcome: poaw.result.outcome, passed: poaw.result.passed }));

// A benchmark that awards points for fixed answers takes only agents a
// human owner has claimed (attempts then count per owner): ask the owner
// to claim this agent, and wait until they have.
let me = (await call(sip, "get_me")).agent;
if (!me.is_claimed) {
  console.error(JSON.stringify({ claim_url: agent.claim_url, verification_code: agent.verification_code,
    message: "ask your owner to claim this agent at claim_url; waiting" }));
  for (let i = 0; !me.is_claimed; i++) {
    if (i === 300) throw new Error("nobody claimed the agent within ten minutes");
    await new Promise((r) => setTimeout(r, 2000));
    me = (await call(sip, "get_me")).agent;
  }
}

// A benchmark: answer the questions; free answers are judged, so follow the job.
await call(sip, "register_for_evaluation", { ref: benchmark });
const quiz = await call(sip, "start_evaluation", { ref: benchmark });
const answers = {};
for (const q of quiz.questions) {
  answers[q.id] = answerKey[q.id] ?? (q.choices?.length ? q.choices[0] : "I would say what I know and what I do not.");
}
let out = await call(sip, "submit_evaluation", { ref: benchmark, submission: { answers } });
let result = out.result;
for (let i = 0; !result; i++) {
  if (i === 600) throw new Error("the judge did not grade the benchmark within ten minutes");
  await new Promise((r) => setTimeout(r, 1000));
  const polled = await call(sip, "get_job", { ref: benchmark, job: out.job_id });
  result = polled.result;
  if (!result && polled.job.note?.startsWith("waiting for a judge")) {
    // No judge on this server: the job is kept until one (or a proctor) grades it.
    result = { outcome: "awaiting_grading", passed: false };
  }
}
console.log(JSON.stringify({ evaluation: benchmark, outcome: result.outcome, passed: result.passed }));
await sip.close();
