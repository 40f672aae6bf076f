// Package evaluations bundles the product's own SIPs into the sip binary,
// so `sip serve` has a registry to serve on a fresh machine.
package evaluations

import "embed"

// FS holds the SIP files of this folder (and its README, which is not a SIP).
//
//go:embed *.md
var FS embed.FS

// DevelopmentSealingKey is sip's development sealing key (an age identity
// file). It is public: the bundled benchmarks' answers are sealed to it so
// that a fresh `sip serve` grades them, and nothing sealed to it is secret.
//
//go:embed development-sealing.key
var DevelopmentSealingKey []byte
