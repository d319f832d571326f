package mrtr_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wopneg/wopneg/negotiate/mrtr"
)

// TestSamePrincipalNameInTwoTenants: a principal's share of the nonce
// store is its own tenant's: a principal of one tenant holding its whole
// share leaves a principal of the same name in another tenant its own.
func TestSamePrincipalNameInTwoTenants(t *testing.T) {
	s, err := mrtr.NewSealer(mrtr.SealerOptions{Keys: []mrtr.Key{key("k", 1)}, MaxRounds: 1, NonceCapacity: 100, NoncesPerPrincipal: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	open := func(b mrtr.Binding) error {
		st, err := s.Seal(b, 1)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Open(ctx, st, b)
		return err
	}
	for i := range 3 {
		if err := open(binding); err != nil {
			t.Fatalf("state %d of the share: %v", i+1, err)
		}
	}
	if err := open(binding); !errors.Is(err, mrtr.ErrNonceStoreFull) {
		t.Fatalf("past the share: %v, want ErrNonceStoreFull", err)
	}
	other := binding
	other.Tenant, other.RunID = "umbra", "umbra/run-0123456789abcdef"
	for i := range 3 {
		if err := open(other); err != nil {
			t.Errorf("state %d of the same principal name in another tenant: %v", i+1, err)
		}
	}
}
