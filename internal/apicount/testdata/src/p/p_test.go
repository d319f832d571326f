package p

func Tested() {}
