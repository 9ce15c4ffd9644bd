solve linear:4 --budget 5
