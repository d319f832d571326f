package cli

import (
	"fmt"
	"io"
	"os"
)

// Linting a document that still advertises gRPC prints one finding per
// line, "PATH: RULE: message", and exits 1.
func ExampleMain_lint() {
	code := Main([]string{"lint", "--now", "2026-11-29", "testdata/discovery/rule-grpc-block.json"}, nil, os.Stdout, io.Discard)
	fmt.Println("exit", code)
	// Output:
	// grpc: grpc-block: the grpc block was removed by RFC 0175: v2 does not advertise transports
	// exit 1
}

// Migrating a one-line v1-era document keeps its layout, its key order
// and every value it does not own, such as the vendor extension's 1.50
// and its escapes; the report goes to stderr.
func ExampleMain_migrate() {
	code := Main([]string{"migrate", "--now", "2026-11-29", "testdata/discovery/migrate-compact.json"}, nil, os.Stdout, io.Discard)
	fmt.Println("exit", code)
	// Output:
	// {"protocolVersions":["2.0"],"preferredVersion":"2.0","a2a":{"status":"experimental","since":"2.0","until":"2.1","witness":"seam-gated","versions":["1.0","1.1"],"preferredVersion":"1.1","minimumVersion":"1.0","refreshedAt":"2026-11-20","profiles":[]},"x-vendor":{"weight":1.50,"note":"caf\u00e9 \/ bar"}}
	// exit 0
}
