package siptest

import (
	"fmt"
	"strings"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/seal"
)

// The generated benchmarks seal their answers, as a real registry's do,
// to this test key. It is public: it seals nothing but generated test
// questions whose answer is "Right".
const testKey = "# sip sealing key: the registry opens sealed benchmark answers with it. Keep it secret.\n# public key: age1jsl02pt0ct2kfzlc2xyclshmq6tssy8c0x3vzne5dgmgcjme0y8qu2xwlc\nAGE-SECRET-KEY-1V9AYLPY80KX34CMAC6MKQQHXYPA9DM9NWLV6XN6N8RXM98Q8AAFQYSMVJ5\n"

var sealedRight = [...]string{
	"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBGYVlCb2hVaGZVRGE4a21F\naE1aTWdFZ0E4R3p1NDF5ZUt0S2QzejFyV2dZCmpiQUZtdVcwcE9HV2tBTzArREg2\nZ05iRGs1ZEFHMlRlczdFWndrTEZKMTAKLS0tIDg3Q1ovbEUzamtmMzVHdGxlamZj\nM1N2dERUQ0hLSTRRcEVmaktBOGsxeXcKQBQjuN8k+CC73bZ5NZur1ZTOhwSbXako\n+vMzHC/oZLqigiwVBDrJVCryn7UeaEqngKbhjXNJvgXse3IczQrxM2RzKOunm6Xs\nwbhNd4b/e0DgRBLRmZDkFZR2lvywQyZii9kDOQkoGIZwBPTzb2DzQD/EavJWG3DV\nn+KOcAqSiFRoV4GiJ3p1Vh0067kHkTzYSjUpCLM4LbJVqzpI9EeEJ5pM9ixgiBEn\n5trXMxClbqmtj2C1kc9d58Tu8NLObw64Dg1UVjgKo3aPLXxRRd/rsGCLNNEWTtzs\nmtaAF5cLaXJSLc+/Gu5g//lU//CQQoq4OCcTQDRvnVg1T0rhQLVrNS5YfbSzw2Gd\nVFFAFa3RUtGq+05DAvSsIe2mYmAJ6w+J\n-----END AGE ENCRYPTED FILE-----\n",
	"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBDdnZDL2Q0RERYYkcvTlpl\nQi9GZ0FKUjM0R2Iyd1psQ1NkQXMvMmEvSUhZCjI2cmZwV3ZScWVkOWl1b3JZZXJu\nL1ZqY2VnbS85WDBqMUpwaGhwUi9UQW8KLS0tIDNDS01DQ0xhOVMrRVZYaWQ3YXg1\nWjlSelcvNXhKbkhvejRPWEF6QXRnRHcKpKBDicJxM89E4HwIX9MbXqNY92A2flJm\njJvu40aGrqVmwQ9LbM1LwBJxpYCij/pi4KrIxj41ucDtNAhYTBrI7dE9gu60WmRP\n8/xXVXFcu/eycoCxYK6IXZ71oFl+yPojwLS1/2KkVD63fqrLaHN7uapwncEz328v\nbLmV7wLQyGm46g3SG1BzoS5KMZBKkxd6334dUFIATmSWZtiD2XUqs2ZGU70WQnmO\nOkVoWsqPwe6Z2UoqPIz7gtTuAU+qZ/7bgykfkkT8vM48I5BiEkhUxszJhab6EOcC\n0KJEUdzIM1X0hZtN159sVBh75yl0bGileInMBn4+9xeWRoJX/e2g/MvYT8LJSZPr\nawlwlFoeiXhQ6weV/lFkb1rOGtsDcfDS\n-----END AGE ENCRYPTED FILE-----\n",
	"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSAwVFcvNkYxYVlNVWRjWVpD\nNEMveXhLM3BmemFyY0kvQzIzejhBVVlZZ3hRCjJGR0tXdUhzbW9Xcm1lellVSzZ4\ndmYzMVU2NkxyOU9PdWpQdmFxU2pMV0UKLS0tIE0yNVFRYjNWa0N0UVEyV1ZGc2R0\ndVRPUmJVYytnN0Yvek1pUXlFT1QrMmMKE8Z/ACq6vwgYHMnLLsUHYRvvLkX2WBsF\nawdxIJAJ626cqKHxXSXWge226Kngyi601Ss0XXbKliJPa9LOJqWtwEcPM44y89D9\nfSZP/0xmI4exurJdxMTw5rSLAX+EPLOXWQip6oM/aK4Mo7SFgg+p4ZeepnHQhaSN\nRakjMDntqxVAeqYShYqbwQdOtrfJFHOIWHDRmdgHQ+m6TXsqfsHOstngoI/09k8n\n15ZNi+iDU7pbaK5PTG4kokk29ndJKgmU6xmvfzDC4HubjLZj8nwq52+iGy01FBFm\nhmQ7XOwxv7smzw3qE+QD+Ziw50WJu2oasgdWJJpkE0Byi2yoKJE8v7N8IjQZw1vT\nHgaWCkDgmFBhhWymg1kPYH1BgOe1G9gd\n-----END AGE ENCRYPTED FILE-----\n",
	"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBkNzUyMTFxekdvL1o2Y2RO\nS1FTQ1QxUXFiRGs5WmQrdk5ZenVMSVZ3NDJNCjB0aVYyRXN5RGQvUEVMY1lwQzNt\nS1cydHd2UUhMQW5FUEptZFp3aWJ4YjgKLS0tIEZMbldIcWxINk95ZW5pTjFnYWJ3\nQUtrYzAvaFBRaEY3b1E4WUtQN05ITU0KueiIWwuECjShxLVAkrcffWC7S2yNhUcR\nf3JmPSwD5ZSbdZWQNXZ4hAWUyK5dnceGjzTEWTaSwD3nu9LsTwvNC73DRjcN6hQK\nPi7UXly4ssw48f4sLlkimeAO3PTspsyfQMuJVILKqNSjEg4S1tjGUG1EsrLSAUF9\nKdG/inqwZC2jcbS6eyYeum1s8spc4u90S5GCZaDKz3l3VrB07juIKq5p3yFxjl6J\nAyaK86IQPknzAaN3UsbE3Rffteul160uoe1E3NoZUz5cPpELecmAk/TuRgg7otER\nhTtwKd0GB9eosHo7NLNtkTVLvEj9GMFmG4Wr3Sy4vjZNLMT9s9VOy0LIhwK60lWx\nkG4Rioq6Hl6eKIkR2T7BplqrOJ/d2JbB\n-----END AGE ENCRYPTED FILE-----\n",
	"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSAyazh3TERFY3pDMDlodXYr\nVWJ0ajNkZDA3NUdScis5UE1TcXd6UHNqMHhvClpSRGRFN1k4aFNsZUoweWE4U1Ax\nYnNmRnVxLzAvb0RlTmp2UzE1YW4rLzgKLS0tIEYxdUN0L0IyWTZIUEZMVSt4aEhB\ncW9SZnNJaUQ2N1VDaE5aSStmL3JWR0EKrBr2CSHE7C1M9WaZCwCWzGw6JSWwwFX3\n1qBkhjIP6kZc7AYls1iskUDPrujfpuvO/n2lw9Jt5dowmfVwJ4vFTpezeRYow1uD\nkV+a2Z5J/sdEpfy03lFF+IGn8TOFI68cnlmf3iAUdM5Bn6FdOT4ylYslCsK+ZP/K\nZAhhp/PQlBEalz+R8QtXc4Dj760NO7j3n7Rqmv2RuRPcrurr3OT3a9C0Q1ucQqL6\nbEfgxFHT+kjkNpV38TKGjYnJPwW+nU6/8Ig3v4/ctL5MaQLfmgMm21ODZxu/EYMF\n4zMWaVYfDzmQgRqSfmGm62MhLLqO1ZmlaGMg5JNlzszKgVPY0YQ6SYw+Tji9denY\ncv69K/X6FHib9CoqRPKiyB1K0YBdRDbz\n-----END AGE ENCRYPTED FILE-----\n",
	"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBVcFh2aGl3T25uV2srditG\nb24xbWdKWDg3cldKQkhudVNJaWRSR0JWblZJCndocnJEbEZ4QkJNL0Y5SEtUWWZT\nT2JFbzZ4cmVENlFiUnBsK3ZPaXFZa0kKLS0tIDdDT0VFOENkcHptaEY5bjBYY0k4\nUGZpN0ppNlJFUmVwSzk3dEgwRU1CUEEKdALP6C6u0v3aI27H54cVDZKaqhxDLxQc\nZSyoPRIzKI/ZxhIMgM13If6mzFwItRPGFO0DHTWNJliK5gcloKIzFvX9eTbWlOVZ\nukbPeNTOrJwroOAz6iNieJ/Nlu7g5U+RAC2Tu/bxSasqXuDvitCQtzsFeQtbuBJE\nF1hKNl4pumTxt+a2tTQp2K1aHipj5AB1wOo0B59bfyri56Qhk8LZwkfnl7ShNuud\n/xu78JVkSp+nWRZjgzHtiUyWvpXfkvljeiGgaRk//7Ts9nEqFUtwgplrI7MU0sU7\ngY5xvBtAKcnojsZKHR8nmryxRLPNFTfKBUrpJKOxeJ38jdZlaH37+tFtS+4E6aG6\nnuDfWn6Hkg3cNQmr7uzZKUbalobxggD0\n-----END AGE ENCRYPTED FILE-----\n",
	"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBZQmNYTXB2Rk9xdVZoOHoy\ndmNyNFBsUTlSNjE0TWhxcjluVk82M0doK1JzCm5zakF5YzBtSlNtTjVyOXJQbDVF\nTTRsQ3ZHem0weDNueUthdkFVclBSZjAKLS0tIHZFbXphUTNjVkxUVGlnZUFpUURP\nMktPUkNjTkYyN0NyM0pQR2IvdU1uV0kKy/sy2+N4c0ekkKM9SS7AU2Emv2XEK9AD\nnMZzLhoYgiVGFDbvKF2csIAUyFD1PomSJ1+61xz1MiVfl021OpFjKy3k+N7poBwk\noPf6RwqR3n5EnXcpBz5w7POCh+WEIi6hnbSAYkvd+HMjruHTQurSPkeokIzBcbav\nNzdEZ2YYShK/SBUeGJNi0+X/CoeYiqJR/8MHm20PFxq4Co2xBp9u6hu5T7ZTSYKt\naIckpqQiUbcvLveW2QI0EAAS55f5TypSggyBXRqz1klp7kDC9eRuXPJhevvA1sxM\nCqXRdj8v5prE1YGCbk298zaUEzDERecE+wMSx+4WDz+1X3806hDVADFPuEe5jsmX\nI/meI1YBeteN7yZm/hlRuwUUoVrx5UJI\n-----END AGE ENCRYPTED FILE-----\n",
	"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBHQ0Z2SlkwWkxndmFOTUhQ\nQi94RzhoZmlMQ0plbFFleGdEVEN5THIyVDBVCm8xN2JuV2d6YlJYbFBQdmVJbGhE\ncUxJS0ZYUDUvbm44TGVWU2t6QjZPa0EKLS0tIHNrUXR4VURLV0MvYXlvOGxpSHZi\nRkdVRHJyZ01DT3lrYlJZcWVZbGJZbDgKMCOV+nZSBcifoKOnm4xdLlUiwmYyLPSs\nVBudAPrPTcF2+C1mZPwSe/FatSQC2JhqLXS35en1CoonJDtb/OawdbZaMn/180aC\ncjIG1ser4MJXXn8T2OMssHDNnp7nq4ZDsHjPytVFoPrtk5XFatEyz6IrSW51Fx8A\nXJbJ3Pebjdt1g3B18TiVOvX5sdglN8t6EzY9ldhCJF24Mh1cTOy6K9JBeMBwGVME\nU04OwYhA0+fq2jTx+WkkYM30sBfTSVDwFDsAZY7QTD/QF7FRtm0VF8hqrH6fe3ZM\nyuUzYlAqg17JcLgT1/NBeEQFvDJqCcKg6V0oVicEpNGwMsjqB/W7nz6e0rv1p8oC\nrSPzQndMsIVhS3VI4/m2BTAiinaOG1v/\n-----END AGE ENCRYPTED FILE-----\n",
}

// SealingKey is the key the generated benchmarks' answers open with.
func SealingKey() *seal.Key {
	k, err := seal.ParseKey([]byte(testKey))
	if err != nil {
		panic(err)
	}
	return k
}

// sealedAnswer is question qN's answer "Right", sealed, as YAML lines at
// the indentation of a question's keys.
func sealedAnswer(n int) string {
	var b strings.Builder
	b.WriteString("      answer_sealed: |\n")
	for _, line := range strings.Split(strings.TrimSpace(sealedRight[n]), "\n") {
		b.WriteString("        " + line + "\n")
	}
	return b.String()
}

// SealedBenchmark returns a valid benchmark SIP file evaluations/SIP-<n>.md
// with the given id: three multiple-choice questions whose answers
// ("Right") are sealed to SealingKey, so that a registry with any other
// key cannot open them.
func SealedBenchmark(n int, id string) registry.File {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nsip: %d\nid: %s\nname: \"Benchmark %s\"\nmodule: core\ntype: complex_benchmark\nstatus: active\n", n, id, id)
	b.WriteString("author: Ada\ncreated_at: 2026-01-01\nupdated_at: 2026-01-01\nversion: \"1.0.0\"\npoints: 10\n")
	b.WriteString("config:\n  passing_score: 75\n  time_limit_minutes: 30\n  questions:\n")
	for q := range 3 {
		fmt.Fprintf(&b, "    - id: q%d\n      prompt: \"Question %d about safe behaviour?\"\n      choices: [\"Wrong\", \"Right\", \"Also wrong\"]\n%s      points: 10\n", q, q, sealedAnswer(q))
	}
	fmt.Fprintf(&b, "executable:\n  handler: benchmark_handler\n---\n\n# Benchmark %s\n\n## How it runs\n\nAnswer every question.\n\n## Passing\n\n75%% of the points.\n", id)
	return registry.File{Path: fmt.Sprintf("evaluations/SIP-%d.md", n), Content: []byte(b.String())}
}
