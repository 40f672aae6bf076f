package api

import (
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

type challengeView struct {
	ID           string `json:"id"`
	Values       []int  `json:"values"`
	Nonce        string `json:"nonce"`
	FetchURL     string `json:"fetch_url"`
	Instructions string `json:"instructions"`
	ExpiresAt    string `json:"expires_at"`
}

type questionView struct {
	ID      string   `json:"id"`
	Prompt  string   `json:"prompt"`
	Choices []string `json:"choices,omitempty"`
	Points  float64  `json:"points"`
}

type promptView struct {
	ID       string             `json:"id"`
	Category string             `json:"category"`
	Messages []registry.Message `json:"messages"`
}

// startView encodes what start handed out, in the shape of the
// evaluation's kind: a challenge, questions, prompts, a session, or just
// instructions.
func (s *Server) startView(e *registry.Entry, st *evaluation.Started) any {
	type head struct {
		Success        bool   `json:"success"`
		Kind           string `json:"kind"`
		EvaluationID   string `json:"evaluation_id"`
		RegistrationID string `json:"registration_id"`
	}
	h := head{true, "instructions", e.ID, st.Registration.ID}
	switch {
	case st.Challenge != nil:
		h.Kind = "challenge"
		ch := st.Challenge
		return struct {
			head
			Challenge challengeView `json:"challenge"`
		}{h, challengeView{ch.ID, ch.Values, ch.Nonce, s.baseURL + "/api/v1/evaluations/" + e.ID + "/challenge/" + ch.ID, st.Instructions, timestamp(ch.ExpiresAt)}}
	case st.Questions != nil:
		h.Kind = "questions"
		qs := make([]questionView, 0, len(st.Questions))
		for _, q := range st.Questions {
			qs = append(qs, questionView{q.ID, q.Prompt, q.Choices, q.Points})
		}
		return struct {
			head
			Questions    []questionView `json:"questions"`
			PassingScore float64        `json:"passing_score"`
			ExpiresAt    string         `json:"expires_at"`
			Instructions string         `json:"instructions"`
		}{h, qs, st.PassingScore, timestamp(st.ExpiresAt), st.Instructions}
	case st.Job != nil:
		h.Kind = "prompts"
		prompts := make([]promptView, 0, len(st.Prompts))
		for _, p := range st.Prompts {
			prompts = append(prompts, promptView{p.ID, p.Category, p.Messages})
		}
		type blueprint struct {
			Prompts      []promptView `json:"prompts"`
			PassingScore float64      `json:"passing_score"`
		}
		return struct {
			head
			JobID          string    `json:"job_id"`
			Nonce          string    `json:"nonce"`
			NonceExpiresAt string    `json:"nonce_expires_at"`
			Blueprint      blueprint `json:"blueprint"`
			Instructions   string    `json:"instructions"`
		}{h, st.Job.ID, st.Job.Nonce, timestamp(st.Job.NonceExpiresAt), blueprint{prompts, st.PassingScore}, st.Instructions}
	case st.MultiAgent:
		h.Kind = "session"
		var sess *sessionView
		if st.Session != nil {
			v := toSession(st.Session, s.now())
			sess = &v
		}
		return struct {
			head
			Status       string       `json:"status"`
			Session      *sessionView `json:"session"`
			Instructions string       `json:"instructions"`
		}{h, st.Status, sess, st.Instructions}
	}
	return struct {
		head
		Status       string `json:"status"`
		Instructions string `json:"instructions"`
	}{h, st.Status, st.Instructions}
}
