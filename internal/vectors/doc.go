// Package vectors holds the negotiation vectors and the request and answer
// formats that negotiate/negotiatetest and the wopneg command share: the
// decision vectors as embedded JSON ([Shipped]), read through the module's
// strict JSON reader, the check of one vector against a decide function
// ([Vector.Check]), and the JSON request `wopneg decide` reads
// ([DecodeRequest]) with the answer it writes ([Answer]).
//
// It does not import the testing package, so that the command links none
// of it; negotiatetest turns its checks into subtests.
package vectors
