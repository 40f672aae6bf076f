package registry

// revealOracle warns of an evaluation that awards points or has sealed
// answers and still shows failed attempts their score: changing one
// answer per attempt and reading the score recovers the answer key.
func (d *decoder) revealOracle(s *SIP, doc *Document) {
	if s.Config.Reveal != RevealScore || (s.Points <= 0 && !s.hasSealedAnswers()) {
		return
	}
	d.ps.warnf("reveal-score-oracle", doc.Span("config.reveal"),
		"Remove `reveal: score` (such an evaluation reveals only pass or fail by default), or set `reveal: pass_fail` or `none`.",
		"config.reveal: score shows every failed attempt its score: changing one answer per attempt reads the answer key off the scores")
}
