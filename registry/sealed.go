package registry

import "github.com/sipregistry/sip/registry/seal"

// SealBinding is what the sealed answer of question q of s is sealed for:
// the SIP's number and id, the question's id, prompt and choices as
// written. Sealing (`sip seal`), the validation check and grading all
// open sealed answers for this binding, so a block copied to another SIP
// or question, or left under edited wording, does not open.
func SealBinding(s *SIP, q Question) seal.Binding {
	return seal.Binding{SIP: s.Number, ID: s.ID, Question: q.ID, Prompt: q.Prompt, Choices: q.Choices}
}

// SealedUniform is the one message of a SIP whose sealed answers do not
// all open, for its own questions as written, to one of their choices,
// when the reader may not see sealed answers (Options.ShowSealed): it is
// the same whichever answer fails and why, so the check tells nobody
// anything about an individual sealed answer.
const SealedUniform = "sealed answers must be sealed for this SIP's questions as written: run `sip seal`"
