package main

func Main() {}
