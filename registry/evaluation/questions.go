package evaluation

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/sipregistry/sip/registry"
)

// Opener opens sealed answers with the registry's sealing key, each for
// the SIP and question it was sealed for (package seal's Key is one).
type Opener = registry.Opener

// answerKeys remembers the opened answer keys of definitions, and the
// refusals of those that do not open: a version's content never changes,
// nor does a service's key, so one opening per version and replica serves
// every attempt and every listing.
type answerKeys struct {
	mu sync.Mutex
	m  map[string]openedKey // by content hash
}

// openedKey is a definition's answer key (question id → answer), or why
// it does not open.
type openedKey struct {
	key     map[string]string
	refusal *Refusal
}

// questions is the benchmark one attempt takes, decided here for start,
// submit, the judge and the proctor alike: the questions drawn for the
// attempt (every one, or config.sample of them drawn for this
// registration alone), in the SIP's order, each with its answer opened
// (sealed answers with the registry's key), under the pinned definition.
func (s *Service) questions(def *Definition, registrationID string) (*registry.BenchmarkConfig, error) {
	cfg := def.Config.Benchmark
	if cfg == nil {
		return nil, fmt.Errorf("%s is not a benchmark", def.ID)
	}
	key, err := s.answerKey(def)
	if err != nil {
		return nil, err
	}
	out := *cfg
	out.Questions = make([]registry.Question, 0, len(cfg.Questions))
	drawn := s.drawn(cfg, registrationID)
	for i, q := range cfg.Questions {
		if drawn != nil && !drawn[i] {
			continue
		}
		if q.Sealed != "" {
			q.Answer = key[q.ID]
		}
		out.Questions = append(out.Questions, q)
	}
	return &out, nil
}

// drawn picks config.sample of the pool's questions for one attempt, from
// the record key and the registration, so that start and submit agree
// without storing the draw and nobody without the key can predict it.
// Nil means every question.
func (s *Service) drawn(cfg *registry.BenchmarkConfig, registrationID string) map[int]bool {
	if cfg.Sample <= 0 || cfg.Sample >= len(cfg.Questions) {
		return nil
	}
	order := make([]int, len(cfg.Questions))
	for i := range order {
		order[i] = i
	}
	s.permute("sample\x00"+registrationID, len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	drawn := make(map[int]bool, cfg.Sample)
	for _, i := range order[:cfg.Sample] {
		drawn[i] = true
	}
	return drawn
}

// shuffled is choices in the order one attempt sees them: a permutation
// drawn from the record key, the registration and the question, so that
// starting again shows the same order, no two attempts share one by
// design, and nobody without the key can predict it. A fixed-position
// strategy (always the first choice) passes no more often than chance.
// Answers are the text of a choice, so grading needs no permutation.
func (s *Service) shuffled(registrationID, questionID string, choices []string) []string {
	if len(choices) < 2 {
		return choices
	}
	out := slices.Clone(choices)
	s.permute("choices\x00"+registrationID+"\x00"+questionID, len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// permute shuffles n items with a generator seeded from the record key
// and what the permutation is for.
func (s *Service) permute(label string, n int, swap func(i, j int)) {
	m := hmac.New(sha256.New, s.recordKey)
	m.Write([]byte(label))
	var seed [32]byte
	copy(seed[:], m.Sum(nil))
	rand.New(rand.NewChaCha8(seed)).Shuffle(n, swap)
}

// answerKey opens the sealed answers of def (nil when it has none). A
// sealed answer that does not open makes the benchmark impossible to
// grade here: the attempt is refused as unavailable, and the message
// names the question, never an answer.
func (s *Service) answerKey(def *Definition) (map[string]string, error) {
	var sealed []registry.Question
	for _, q := range def.Config.Benchmark.Questions {
		if q.Sealed != "" {
			sealed = append(sealed, q)
		}
	}
	if len(sealed) == 0 {
		return nil, nil
	}
	s.keys.mu.Lock()
	k, ok := s.keys.m[def.ContentSHA256]
	s.keys.mu.Unlock()
	if !ok {
		k = s.open(def, sealed)
		s.keys.mu.Lock()
		if s.keys.m == nil {
			s.keys.m = map[string]openedKey{}
		}
		s.keys.m[def.ContentSHA256] = k
		s.keys.mu.Unlock()
	}
	if k.refusal != nil {
		r := *k.refusal // callers may add to their copy
		return nil, &r
	}
	return k.key, nil
}

// open opens def's sealed answers with the service's key.
func (s *Service) open(def *Definition, sealed []registry.Question) openedKey {
	if s.opener == nil {
		return openedKey{refusal: unsealable(def, "", "this registry has no sealing key (SIP_SEALING_KEY_FILE)")}
	}
	key := make(map[string]string, len(sealed))
	for _, q := range sealed {
		a, err := s.opener.Open(registry.SealBinding(&def.SIP, q), q.Sealed)
		if err != nil {
			return openedKey{refusal: unsealable(def, q.ID, err.Error())}
		}
		key[q.ID] = a
	}
	return openedKey{key: key}
}

func unsealable(def *Definition, question, why string) *Refusal {
	msg := def.ID + " cannot be graded on this registry: "
	if question != "" {
		msg += "the sealed answer of question " + quote(question) + " does not open (" + why + ")"
	} else {
		msg += why
	}
	return refuse(registry.ErrUnavailable, "unavailable", msg,
		"The registry's operators must serve it with the key its answers were sealed to; try another evaluation meanwhile.")
}
