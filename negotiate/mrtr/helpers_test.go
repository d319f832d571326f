package mrtr_test

import (
	"crypto/hmac"
	"crypto/sha256"
)

func macOf(secret []byte, head string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(head))
	return m.Sum(nil)
}
