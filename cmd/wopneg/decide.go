package main

import (
	"io"

	"github.com/wopneg/wopneg/negotiate/negotiatetest"
)

// decide answers one request read from stdin.
func decide(stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := readAll(stdin)
	if err != nil {
		return fail(stderr, 2, err)
	}
	req, err := negotiatetest.DecodeRequest(data)
	if err != nil {
		return fail(stderr, 2, err)
	}
	if err := req.Validate(); err != nil {
		return fail(stderr, 2, err)
	}
	answer, _ := req.Decide(nil)
	if err := writeJSON(stdout, answer); err != nil {
		return fail(stderr, 1, err)
	}
	return 0
}
