package registry

// unclaimedSeats refuses `require_claimed: false` where it cannot hold:
// proctored evaluations and live class work seat unclaimed agents only
// with allow_unclaimed, whose proctors the SIP names individually.
func (d *decoder) unclaimedSeats(s *SIP, doc *Document) {
	c := s.Config
	if c.RequireClaimed == nil || *c.RequireClaimed || !s.RequiresClaimed() {
		return
	}
	d.ps.errorf("config-invalid", doc.Span("config.require_claimed"),
		"Set config.allow_unclaimed: true and name the proctors who may grade unclaimed agents (config.proctor.proctors), or remove require_claimed.",
		"config.require_claimed: false does not seat unclaimed agents in %s: a proctor's independence is checked by comparing owners, and only allow_unclaimed opts out", s.Type)
}
