info linear:4
