package exchange_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"

	"github.com/wopneg/wopneg/internal/exchange"
)

// An answer is read as its clients read it: here a gzip-coded JSON-RPC
// error written in two pieces, read by a protocol's Classify that refuses
// on -32022.
func ExampleAnswer() {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte("\xEF\xBB\xBF" + `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported"}}`))
	_ = zw.Close()
	refusesOn32022 := func(msg []byte, complete bool) exchange.Verdict {
		switch {
		case !complete:
			return exchange.Undecided
		case bytes.Contains(msg, []byte(`"code":-32022`)):
			return exchange.Refused
		}
		return exchange.Served
	}
	var a exchange.Answer
	a.Start(http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}, 1<<20, refusesOn32022, nil)
	fmt.Println(a.Write(b.Bytes()[:10]) == exchange.Undecided)
	fmt.Println(a.Write(b.Bytes()[10:]) == exchange.Undecided)
	fmt.Println(a.End() == exchange.Refused)
	// Output:
	// true
	// true
	// true
}
