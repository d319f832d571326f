package facets

// DecodeRecord is [ParseRecord] for tools that report rather than refuse,
// such as a linter: like go/parser.ParseFile, it returns what it could
// decode together with the error, so that the caller can go on to the
// checks that need a clock ([Record.CheckUntil], [CheckRefresh]) and
// report everything in one pass.
//
// The error is exactly the one ParseRecord returns for data. The Set holds
// every facet the document names, decoded as far as its shape allowed: a
// value of the wrong JSON type is left zero, and a facet that is not an
// object is a zero facet, so the clock checks find nothing to add there.
// The Set is zero when data is not JSON, repeats a key, or names neither
// facet.
func DecodeRecord(data []byte) (Set, error) {
	s, vs := decodeSet(data, true)
	return s, asError(vs)
}
