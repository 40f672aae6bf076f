package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/registry/proposal"
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

// SignIn is the contribution editor's sign-in with GitHub: the App's
// OAuth credentials and the key that seals people's tokens at rest.
type SignIn struct {
	ClientID, ClientSecret string
	Key                    []byte
}

// signInFromEnv configures sign-in from SIP_GITHUB_CLIENT_ID,
// SIP_GITHUB_CLIENT_SECRET and SIP_SESSION_KEY; without a client id it is
// off. It needs the App's repository (SIP_GITHUB_REPOSITORY), and is
// refused without a session key: people's tokens are never stored in
// plain text.
func signInFromEnv(e env) (*SignIn, error) {
	id, secret, key := e.getenv("SIP_GITHUB_CLIENT_ID"), e.getenv("SIP_GITHUB_CLIENT_SECRET"), e.getenv("SIP_SESSION_KEY")
	if id == "" {
		if secret != "" {
			return nil, errors.New("SIP_GITHUB_CLIENT_SECRET is set without SIP_GITHUB_CLIENT_ID: set both (the App's client id and secret) to let people sign in to the editor")
		}
		return nil, nil
	}
	if secret == "" {
		return nil, errors.New("SIP_GITHUB_CLIENT_ID is set without SIP_GITHUB_CLIENT_SECRET: the App's client secret is needed to sign people in")
	}
	if key == "" {
		return nil, errors.New("refusing to sign people in without SIP_SESSION_KEY: their GitHub tokens are stored encrypted with it (make one: openssl rand -base64 32)")
	}
	k, err := proposal.ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("SIP_SESSION_KEY: %v", err)
	}
	if e.getenv("SIP_GITHUB_REPOSITORY") == "" {
		return nil, errors.New("SIP_GITHUB_CLIENT_ID is set without SIP_GITHUB_REPOSITORY: sign-in opens pull requests on the repository the registry follows")
	}
	return &SignIn{ClientID: id, ClientSecret: secret, Key: k}, nil
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
