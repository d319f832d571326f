package cli

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"

	"github.com/wopneg/wopneg/events"
)

// digest prints, for each URL argument or else for each line of stdin, the
// peer digest and the origin it hashes as "<64 hex>  <origin>" (sha256sum's
// two spaces), or "error: <message>" for an input with no http(s) or ws(s)
// origin. It exits 1 when any input was refused, 2 when stdin cannot be
// read or holds a line longer than 1 MiB, and 0 otherwise.
func digest(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := bufio.NewWriter(stdout)
	refused := false
	one := func(rawURL string) {
		origin, err := events.Origin(rawURL)
		if err != nil {
			refused = true
			fmt.Fprintf(out, "error: %s\n", strings.TrimPrefix(err.Error(), "events: "))
			return
		}
		// events.PeerDigest is this hash of this origin; hashing what is
		// printed keeps the line self-checking.
		fmt.Fprintf(out, "%x  %s\n", sha256.Sum256([]byte(origin)), origin)
	}
	for _, a := range args {
		one(a)
	}
	if len(args) == 0 {
		lines := bufio.NewScanner(stdin)
		lines.Buffer(nil, maxRequest)
		for lines.Scan() {
			one(lines.Text())
		}
		if err := lines.Err(); err != nil {
			out.Flush()
			return fail(stderr, 2, fmt.Errorf("digest: reading stdin: %w", err))
		}
	}
	if err := out.Flush(); err != nil {
		return fail(stderr, 2, err)
	}
	if refused {
		return 1
	}
	return 0
}
