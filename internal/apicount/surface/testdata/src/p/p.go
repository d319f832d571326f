package p

// Exported names: T, T.M, I, I.Do, J, J.Run, G, G.N, P, P.Get, F, V, C (13).
type T struct{ Field int }

func (T) M()          {}
func (T) unexported() {}
func (*t) Hidden()    {}

type t struct{}

type I interface {
	Do()
	hide()
}

type J interface {
	I
	Run()
}

type G[X any] struct{}

func (*G[X]) N() {}

type P[K comparable, V any] struct{}

func (P[K, V]) Get() {}

func F() {}
func f() {}

var V, v = 1, 2

const C, c = 1, 2
