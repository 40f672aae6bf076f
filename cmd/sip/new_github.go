package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/registry"
)

// claimedByOpenPulls lists the SIP numbers that a repository's open pull
// requests add (files evaluations/SIP-<N>.md), so that sip new does not
// pick one of them. token is a GitHub token that can read the repository.
func claimedByOpenPulls(ctx context.Context, apiURL, token, owner, name string) ([]int, error) {
	hc := &http.Client{Timeout: 30 * time.Second, Transport: tokenTransport{token: token}}
	gh := github.NewClient(hc)
	if apiURL != "" {
		// The API's root as given (GitHub Enterprise Server: https://HOST/api/v3).
		u, err := url.Parse(strings.TrimSuffix(apiURL, "/") + "/")
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("SIP_GITHUB_API_URL %q is not a URL", apiURL)
		}
		gh.BaseURL = u
	}
	var nums []int
	opts := &github.PullRequestListOptions{State: "open", ListOptions: github.ListOptions{PerPage: 100}}
	for {
		prs, resp, err := gh.PullRequests.List(ctx, owner, name, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the open pull requests of %s/%s: %w", owner, name, err)
		}
		for _, pr := range prs {
			files, err := pullFiles(ctx, gh, owner, name, pr.GetNumber())
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				if n, ok := registry.NumberOf(registry.DefaultDir, f); ok {
					nums = append(nums, n)
				}
			}
		}
		if resp.NextPage == 0 || len(nums) > 10_000 {
			return nums, nil
		}
		opts.Page = resp.NextPage
	}
}

// pullFiles lists the files a pull request adds.
func pullFiles(ctx context.Context, gh *github.Client, owner, name string, n int) ([]string, error) {
	var out []string
	opts := &github.ListOptions{PerPage: 100}
	for {
		files, resp, err := gh.PullRequests.ListFiles(ctx, owner, name, n, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the files of pull request #%d: %w", n, err)
		}
		for _, f := range files {
			if f.GetStatus() == "added" || f.GetStatus() == "renamed" || f.GetStatus() == "copied" {
				out = append(out, f.GetFilename())
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// tokenTransport authenticates every request with a GitHub token.
type tokenTransport struct{ token string }

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "token "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}
