package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sipregistry/sip/registry/credential"
	"github.com/sipregistry/sip/registry/credential/webfetch"
)

const verifyAbout = `Verify an Open Badges credential a SIP registry issued: its format, that
the key that signed it is the issuer's (the issuer's did:web document is
fetched), the eddsa-rdfc-2022 signature over the whole credential, and that
it is valid now. Each check is printed; the exit status is 0 when all pass,
65 when one fails, 69 when the issuer's keys cannot be fetched.`

func runVerify(ctx context.Context, e env, args []string) int {
	fs := newFlagSet("verify", "[--format text|json] FILE", verifyAbout)
	format := fs.String("format", "text", "output format: text or json")
	pos, code, ok := parseFlags(fs, e, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") {
		fs.SetOutput(e.stderr)
		fs.Usage()
		return exitUsage
	}
	var raw []byte
	var err error
	if pos[0] == "-" {
		raw, err = io.ReadAll(io.LimitReader(os.Stdin, credential.MaxSize+1))
	} else {
		raw, err = readFile(pos[0])
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "sip verify: %v\n", err)
		return exitNoInput
	}
	web := webfetch.Client{}
	r := credential.Verify(raw, &credential.WebResolver{Fetch: web}, &credential.WebStatus{Fetch: web}, time.Now())
	if *format == "json" {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
	} else {
		for _, c := range r.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(e.stdout, "%s %-10s %s\n", mark, c.Name, c.Detail)
		}
		if r.Verified {
			fmt.Fprintf(e.stdout, "verified: %s holds %s, issued by %s\n", r.Subject, r.Achievement, r.Issuer)
		} else {
			fmt.Fprintf(e.stdout, "not verified: the %s check failed\n", r.Failed())
		}
	}
	switch {
	case r.Verified:
		return exitOK
	case r.Failed() == "issuer key":
		return exitUnavailable
	}
	return exitData
}
