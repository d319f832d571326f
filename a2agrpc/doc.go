// Package a2agrpc negotiates the A2A version of calls over A2A's gRPC binding.
package a2agrpc
