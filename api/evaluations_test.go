package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

func TestListEvaluations(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, c *client, s registry.Store) {
		syncFiles(t, s, "c1", fixture()...)
		for _, tt := range []struct {
			query, want string
		}{
			{"", "alpha,beta"},
			{"?status=active", "alpha,beta"},
			{"?status=draft", "gamma"},
			{"?status=all", "alpha,beta,gamma"},
			{"?status=all&module=safety", "gamma"},
			{"?module=nothing", ""},
			{"?type=simple_pass_fail&status=all", "alpha,beta,gamma"},
			{"?type=agent_certification", ""},
		} {
			t.Run("list"+tt.query, func(t *testing.T) {
				var got evaluationList
				if resp := c.get("/api/v1/evaluations"+tt.query, &got); resp.StatusCode != http.StatusOK || !got.Success {
					t.Fatalf("got %d, want 200", resp.StatusCode)
				}
				if got.ids() != tt.want {
					t.Errorf("got %s, want %s", got.ids(), tt.want)
				}
			})
		}
		var got evaluationList
		c.get("/api/v1/evaluations?status=all", &got)
		if e := got.Evaluations[1]; e.ID != "beta" || len(e.Prerequisites) != 1 || e.Prerequisites[0] != "alpha" || !e.CanRegister {
			t.Errorf("beta = %+v", e)
		}
		if e := got.Evaluations[2]; e.CanRegister {
			t.Errorf("a draft can be registered for: %+v", e)
		}
	})
}

func TestListBadParameters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, c *client, s registry.Store) {
		for query, field := range map[string]string{
			"?status=final":                      "status",
			"?type=process":                      "type",
			"?type=quiz":                         "type",
			"?module=" + strings.Repeat("m", 65): "module",
		} {
			var e errorResponse
			if resp := c.get("/api/v1/evaluations"+query, &e); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s: %d", query, resp.StatusCode)
			}
			if e.Success || e.ErrorDetail.Code != "validation_failed" || e.ErrorDetail.Field != field || e.RequestID == "" {
				t.Errorf("%s: %+v", query, e)
			}
		}
	})
}

func TestGetEvaluation(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, c *client, s registry.Store) {
		syncFiles(t, s, "c1", fixture()...)
		for _, ref := range []string{"beta", "SIP-3", "sip-3", "3"} {
			var got struct {
				Evaluation struct {
					ID                  string `json:"id"`
					BodyMarkdown        string `json:"body_markdown"`
					PrerequisiteDetails []struct {
						ID     string `json:"id"`
						Status string `json:"status"`
					} `json:"prerequisite_details"`
					CurrentVersion struct {
						CommitSHA string `json:"commit_sha"`
					} `json:"current_version"`
					Endpoints map[string]string `json:"endpoints"`
				} `json:"evaluation"`
			}
			if resp := c.get("/api/v1/evaluations/"+ref, &got); resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", ref, resp.StatusCode)
			}
			e := got.Evaluation
			if e.ID != "beta" || !strings.Contains(e.BodyMarkdown, "# Evaluation beta") || len(e.PrerequisiteDetails) != 1 ||
				e.PrerequisiteDetails[0].ID != "alpha" || e.CurrentVersion.CommitSHA != "c1" || e.Endpoints["submit"] != "/api/v1/evaluations/beta/submit" {
				t.Errorf("%s: %+v", ref, e)
			}
		}
		for _, ref := range []string{"nope", "SIP-99", "0", "-1", "process", "SIP-1", strings.Repeat("x", 300)} {
			var e errorResponse
			if resp := c.get("/api/v1/evaluations/"+ref, &e); resp.StatusCode != http.StatusNotFound || e.ErrorDetail.Code != "not_found" {
				t.Errorf("%s: %d %+v", ref, resp.StatusCode, e)
			}
		}
		// A NUL is bad input everywhere, before any lookup.
		var e errorResponse
		if resp := c.get("/api/v1/evaluations/%00", &e); resp.StatusCode != http.StatusBadRequest || e.ErrorDetail.Code != "validation_failed" {
			t.Errorf("%%00: %d %+v, want 400 validation_failed", resp.StatusCode, e)
		}
	})
}

func TestVersions(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, c *client, s registry.Store) {
		files := fixture()
		syncFiles(t, s, "c1", files...)
		files[1] = siptest.Edit(files[1], "1.1.0", "2026-03-01", "More.")
		syncFiles(t, s, "c2", files...)
		var got struct {
			CurrentVersion struct {
				Version   string `json:"version"`
				CommitSHA string `json:"commit_sha"`
			} `json:"current_version"`
			Versions []struct {
				Version   string `json:"version"`
				CommitSHA string `json:"commit_sha"`
			} `json:"versions"`
		}
		if resp := c.get("/api/v1/evaluations/alpha/versions", &got); resp.StatusCode != http.StatusOK {
			t.Fatal(resp.StatusCode)
		}
		if got.CurrentVersion.Version != "1.1.0" || got.CurrentVersion.CommitSHA != "c2" || len(got.Versions) != 2 ||
			got.Versions[0].CommitSHA != "c1" || got.Versions[1].Version != "1.1.0" {
			t.Errorf("%+v", got)
		}
		if resp := c.get("/api/v1/evaluations/SIP-2/versions", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("by number: %d", resp.StatusCode)
		}
		if resp := c.get("/api/v1/evaluations/nope/versions", nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("unknown: %d", resp.StatusCode)
		}
	})
}

func TestSIPsAndRemovals(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, c *client, s registry.Store) {
		files := fixture()
		syncFiles(t, s, "c1", files...)
		var before evaluationList
		c.get("/api/v1/evaluations", &before)
		syncFiles(t, s, "c2", files[0], files[1]) // beta and gamma's files are gone
		var after evaluationList
		c.get("/api/v1/evaluations", &after)
		if before.ids() != "alpha,beta" || after.ids() != "alpha" {
			t.Errorf("the API did not see the sync: %s then %s", before.ids(), after.ids())
		}
		var sips struct {
			SIPs []struct {
				ID      string `json:"id"`
				Type    string `json:"type"`
				Status  string `json:"status"`
				Removed bool   `json:"removed"`
			} `json:"sips"`
		}
		c.get("/api/v1/sips", &sips)
		if len(sips.SIPs) != 4 || sips.SIPs[0].Type != "process" || !sips.SIPs[2].Removed || sips.SIPs[2].Status != "deprecated" {
			t.Errorf("sips %+v", sips.SIPs)
		}
		var dep evaluationList
		c.get("/api/v1/evaluations?status=deprecated", &dep)
		if dep.ids() != "beta,gamma" {
			t.Errorf("deprecated: %s", dep.ids())
		}
		// A removed SIP can still be read: results link to it.
		if resp := c.get("/api/v1/evaluations/beta", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("removed SIP: %d", resp.StatusCode)
		}
	})
}

func TestEmptyRegistry(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, c *client, s registry.Store) {
		var got evaluationList
		if resp := c.get("/api/v1/evaluations", &got); resp.StatusCode != http.StatusOK || got.Evaluations == nil || len(got.Evaluations) != 0 {
			t.Errorf("%d %+v", resp.StatusCode, got)
		}
		c.get("/api/v1/sips", nil)
	})
}
