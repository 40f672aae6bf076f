package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/sipregistry/sip/bot"
)

// gitHubAppFromEnv configures the GitHub App from SIP_GITHUB_*; without
// SIP_GITHUB_APP_ID the App is off. Half a configuration is an error, so
// that a typo does not silently leave pull requests unchecked.
func gitHubAppFromEnv(e env) (*bot.Config, error) {
	id := e.getenv("SIP_GITHUB_APP_ID")
	secret := e.getenv("SIP_GITHUB_WEBHOOK_SECRET")
	key, keyFile := e.getenv("SIP_GITHUB_PRIVATE_KEY"), e.getenv("SIP_GITHUB_PRIVATE_KEY_FILE")
	if id == "" {
		if secret != "" || key != "" || keyFile != "" {
			return nil, errors.New("SIP_GITHUB_APP_ID is not set, but other SIP_GITHUB_* settings are: set it (the App's numeric id) to run the GitHub App")
		}
		return nil, nil
	}
	appID, err := strconv.ParseInt(id, 10, 64)
	if err != nil || appID <= 0 {
		return nil, fmt.Errorf("SIP_GITHUB_APP_ID %q: want the App's numeric id", id)
	}
	if secret == "" {
		return nil, fmt.Errorf("refusing to run the GitHub App without SIP_GITHUB_WEBHOOK_SECRET: unsigned webhooks would be accepted")
	}
	pem := []byte(key)
	if key == "" {
		if keyFile == "" {
			return nil, errors.New("the GitHub App needs its private key: SIP_GITHUB_PRIVATE_KEY (PEM text) or SIP_GITHUB_PRIVATE_KEY_FILE")
		}
		if pem, err = os.ReadFile(keyFile); err != nil {
			return nil, fmt.Errorf("SIP_GITHUB_PRIVATE_KEY_FILE: %w", err)
		}
	}
	secrets := []string{secret}
	if prev := e.getenv("SIP_GITHUB_WEBHOOK_SECRET_PREVIOUS"); prev != "" {
		secrets = append(secrets, prev)
	}
	return &bot.Config{AppID: appID, PrivateKey: pem, WebhookSecrets: secrets, APIURL: e.getenv("SIP_GITHUB_API_URL"),
		Repository: e.getenv("SIP_GITHUB_REPOSITORY")}, nil
}

// commitURL is how the pages link a commit: SIP_COMMIT_URL, else the
// commit page of SIP_GITHUB_REPOSITORY on GitHub (or on the Enterprise
// Server that SIP_GITHUB_API_URL names).
func commitURL(e env) string {
	if u := e.getenv("SIP_COMMIT_URL"); u != "" {
		return u
	}
	repo := e.getenv("SIP_GITHUB_REPOSITORY")
	if repo == "" {
		return ""
	}
	host := "https://github.com"
	if api := strings.TrimSuffix(e.getenv("SIP_GITHUB_API_URL"), "/"); strings.HasSuffix(api, "/api/v3") {
		host = strings.TrimSuffix(api, "/api/v3")
	}
	return host + "/" + repo + "/commit/{sha}"
}
