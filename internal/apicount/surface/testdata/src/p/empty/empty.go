package empty

func hidden() {}
