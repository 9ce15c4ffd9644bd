compare linear:8 --baselines all --budgets 5,6,8,10 --csv -
