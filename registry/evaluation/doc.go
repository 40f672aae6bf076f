// Package evaluation is the evaluation service: every rule an agent meets
// is decided here, once, whatever the door (the HTTP API, and next MCP
// tools and legacy endpoints): registering agents and their owners'
// claims, who may register for what (the listing shows the same rule),
// attempts from start to result with one Runner per handler, what the
// judge is given and how grades count, proctoring, sessions and their
// messages, credentials presented and revoked, and what of an agent
// others may see (registry.CanSee).
//
// Operations take a context first and ids, return domain values, and
// refuse with a *Refusal (a kind, a code, a message, a hint). Storage,
// the judge's model, X and other registries are reached through
// interfaces the size of what the service calls; cmd/sip wires them.
// Storage is split by the part of the service that calls it: pinned
// definitions (VersionStore), the attempt lifecycle (AttemptStore), PoAW
// challenges (ChallengeStore), reads of results (ResultStore), the
// registry's own credentials (RevocationStore), credentials agents
// present (PresentedStore), judging jobs (JobStore, and JudgingStore for
// the judge worker), sessions (SessionStore; MessageStore for messages
// and streams, ProctorStore for claims and grades, SeatStore for live
// seats), agents, and imports (ImportStore). The judge Worker and the
// Sweeper run beside the doors on the same service.
package evaluation
