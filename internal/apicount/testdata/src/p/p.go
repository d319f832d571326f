package p

// Exported names: T, T.M, I, I.Do, F, V, C, G, G.N (9).
type T struct{ Field int }

func (T) M()          {}
func (T) unexported() {}
func (*t) Hidden()    {}

type t struct{}

type I interface {
	Do()
	hide()
}

type G[X any] struct{}

func (*G[X]) N() {}

func F() {}
func f() {}

var V, v = 1, 2

const C, c = 1, 2
