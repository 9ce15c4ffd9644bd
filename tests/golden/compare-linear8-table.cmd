compare linear:8 --baselines all --ilp --budgets 5,6,8,10 --quiet
