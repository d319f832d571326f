// # Sinks
//
// For hosts that record decisions (negotiate.DecideAndRecord), the kit has
// a [Recorder], an in-memory events.Sink that numbers run events as a store
// does and can be told to fail, so that a test can check a host fails
// closed; and [TestSink], which checks that any custom events.Sink keeps
// the Sink contract, as testing/slogtest checks a slog.Handler:
//
//	func TestMySink(t *testing.T) {
//		negotiatetest.TestSink(t, func(t *testing.T, fault error) (events.Sink, func() []events.Event) {
//			store := mystore.Open(t.TempDir(), fault) // failing with fault when it is set
//			return store, store.ReadAll
//		})
//	}
//
// TestSink checks a run and a host event field for field, per-run
// numbering and order, eight concurrent writers, refusal of invalid events
// and of done contexts, Close, and that a storage fault reaches the caller.
package negotiatetest
