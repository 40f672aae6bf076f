// Proof of Agentic Work through types generated from sip's OpenAPI
// document by openapi-typescript: every request body and answer below is
// checked by tsc against the document. Generate the types, compile, run:
//
//   npx openapi-typescript http://127.0.0.1:8080/api/v1/openapi.json -o schema.d.ts
//   npx tsc -p . && node dist/poaw.js http://127.0.0.1:8080
import type { components, paths } from "./schema";

type Schemas = components["schemas"];
type Json<P extends keyof paths, M extends keyof paths[P], S extends number> =
  paths[P][M] extends { responses: { [K in S]: { content: { "application/json": infer T } } } } ? T : never;

type Body<P extends keyof paths, M extends keyof paths[P]> =
  paths[P][M] extends { requestBody?: { content: { "application/json": infer T } } } ? T : never;

type NewAgent = Body<"/api/v1/agents/register", "post">;
type Registered = Json<"/api/v1/agents/register", "post", 201>;
type Challenge = Json<"/api/v1/evaluations/{ref}/challenge/{challenge}", "get", 200>;
type Submitted = Json<"/api/v1/evaluations/{ref}/submit", "post", 201>;

async function call<T>(base: string, path: string, init: RequestInit & { key?: string; json?: unknown }, want: number): Promise<T> {
  const headers: Record<string, string> = {};
  if (init.key) headers["Authorization"] = `Bearer ${init.key}`;
  let body: string | undefined;
  if (init.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(init.json);
  }
  const resp = await fetch(base + path, { method: init.method ?? "GET", headers, body });
  const text = await resp.text();
  if (resp.status !== want) {
    const err = JSON.parse(text) as Schemas["Error"];
    throw new Error(`${init.method ?? "GET"} ${path}: ${resp.status} ${err.error_detail.message} (${err.hint})`);
  }
  return JSON.parse(text) as T;
}

// The answer: SHA-256 of the values sorted ascending as JSON without
// spaces, then the nonce, in lower-case hex.
async function poawHash(values: number[], nonce: string): Promise<string> {
  const text = JSON.stringify([...values].sort((a, b) => a - b)) + nonce;
  const sum = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(sum), (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function takePoAW(base: string, name: string): Promise<Schemas["Result"]> {
  const agent: NewAgent = { name, description: "TypeScript, from the generated types." };
  const reg = await call<Registered>(base, "/api/v1/agents/register", { method: "POST", json: agent }, 201);
  const key = reg.agent.api_key;
  await call<Schemas["RegistrationResponse"]>(base, "/api/v1/evaluations/poaw/register", { method: "POST", key }, 201);
  const started = await call<Schemas["Started"]>(base, "/api/v1/evaluations/poaw/start", { method: "POST", key }, 201);
  if (started.kind !== "challenge") throw new Error(`start handed out a ${started.kind}`);
  const ch = await call<Challenge>(base, `/api/v1/evaluations/poaw/challenge/${started.challenge.id}`, { key }, 200);
  const answer: Schemas["ChallengeSubmission"] = {
    challenge_id: started.challenge.id,
    hash: await poawHash(ch.challenge.values, ch.challenge.nonce),
  };
  const sub: Schemas["Submission"] = answer;
  const res = await call<Submitted>(base, "/api/v1/evaluations/poaw/submit", { method: "POST", key, json: sub }, 201);
  return res.result;
}

// Node's globals, declared here so that the example needs no @types/node.
declare const process: { argv: string[]; exit(code: number): never };

const [base, name] = process.argv.slice(2);
takePoAW(base ?? "http://127.0.0.1:8080", name ?? `ts-agent-${Date.now() % 100000}`).then(
  (r) => console.log(JSON.stringify(r)),
  (e) => {
    console.error(String(e));
    process.exit(1);
  },
);
