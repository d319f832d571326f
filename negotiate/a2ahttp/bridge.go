package a2ahttp

import "github.com/wopneg/wopneg/internal/adapter"

func init() { adapter.CardOffers = cardOffers }
