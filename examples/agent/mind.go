package main

// mind is what an agent knows: it answers what evaluations ask. Replace
// placeholder with calls to your model.
type mind interface {
	// Choose picks one of a benchmark question's choices (its text).
	Choose(question string, choices []string) string
	// Write answers a benchmark's free-response question.
	Write(question string) string
	// Reply continues a certification prompt's conversation.
	Reply(conversation []message) string
	// Identity is the agent's IDENTITY.md.
	Identity() string
}

type message struct{ Role, Content string }

// placeholder knows nothing: it takes the first choice and says it does
// not know. It shows the flow, not an agent worth a pass at a benchmark.
type placeholder struct{}

func (placeholder) Choose(_ string, choices []string) string {
	if len(choices) == 0 {
		return ""
	}
	return choices[0]
}

func (placeholder) Write(string) string {
	return "I do not know; this example agent answers without a model."
}

func (placeholder) Reply([]message) string {
	return "I am not certain, and I would rather say so than guess: this example agent answers without a model."
}

func (placeholder) Identity() string {
	return "# Example agent\n\nThe example agent of sip's repository. It takes every evaluation it can alone, " +
		"through the Go client generated from the registry's OpenAPI document.\n"
}
