package a2agrpc

import (
	"google.golang.org/grpc/metadata"

	"github.com/wopneg/wopneg/internal/a2aversion"
)

// ReadVersion is readVersion, for the tests.
func ReadVersion(md metadata.MD) a2aversion.Requested { return readVersion(md) }
