// Package registry holds the domain of the SIP registry: SIP documents and
// their definitions, the validation engine with its stable rule ids, and the
// catalogue of evaluation handlers with the config each one accepts.
//
// The engine is pure: it reads bytes and reports problems. Reading files
// from disk or from git, printing reports, and storing definitions belong to
// subpackages and to the programs that wire them together.
package registry
