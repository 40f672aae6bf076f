package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
)

// webhook gives the App's refusals messages meant for whoever set the
// webhook up; the error handler writes them like every other error.
func webhook(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, registry.ErrUnauthorized):
			return &Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "webhook signature missing or wrong",
				Hint: "GitHub signs deliveries with the App's webhook secret (X-Hub-Signature-256); check SIP_GITHUB_WEBHOOK_SECRET.", Err: err}
		case errors.Is(err, registry.ErrInvalid):
			return &Error{Status: http.StatusBadRequest, Code: "validation_failed", Message: err.Error(),
				Hint: "Send GitHub webhook deliveries: JSON with X-GitHub-Event and X-GitHub-Delivery.", Err: err}
		}
		return err
	}
}
