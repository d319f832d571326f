package q

func NotCounted() {}
