package events

// VerifyNoLeak is verifyNoLeak, for the package's external tests.
var VerifyNoLeak = verifyNoLeak
