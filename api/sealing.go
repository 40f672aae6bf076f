package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// sealingKeyView is the public half of the registry's sealing key, which
// contributors seal benchmark answers to.
type sealingKeyView struct {
	Success bool `json:"success"`
	// Recipient is the age public key new answers are sealed to.
	Recipient string `json:"recipient"`
	// Recipients are every key whose sealed answers this registry opens,
	// newest first (older ones stay after a rotation).
	Recipients []string `json:"recipients"`
	// Development says the key is sip's bundled development key, whose
	// private half is public: nothing sealed to it is secret.
	Development bool   `json:"development"`
	Format      string `json:"format"`
	Usage       string `json:"usage"`
}

// sealingKey answers GET /api/v1/sealing-key.
func (s *Server) sealingKey(c echo.Context) error {
	if s.sealing == nil {
		return notFound("this registry has no sealing key, so it cannot grade benchmarks with sealed answers",
			"Its operators set SIP_SEALING_KEY_FILE; until then seal nothing to it.")
	}
	rs := s.sealing.Recipients()
	return c.JSON(http.StatusOK, sealingKeyView{Success: true, Recipient: rs[0], Recipients: rs, Development: s.sealingDev,
		Format: "age-encryption.org/v1, X25519 recipient, ASCII armor",
		Usage:  "sip seal --recipient " + rs[0] + " evaluations/SIP-<N>.md"})
}
