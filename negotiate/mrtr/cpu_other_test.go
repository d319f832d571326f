//go:build !unix

package mrtr_test

import "testing"

// reportCPU reports nothing where getrusage is missing.
func reportCPU(*testing.B) func() { return func() {} }
