package mcphttp

import (
	"context"
	"net/http"

	"github.com/wopneg/wopneg/internal/adapter"
)

func init() {
	adapter.Discover = func(ctx context.Context, client *http.Client, serverURL, revision string) ([]string, error) {
		d, err := discover(ctx, client, serverURL, revision)
		return d.versions, err
	}
}
