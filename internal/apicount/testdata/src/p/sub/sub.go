package sub

func One() {}
