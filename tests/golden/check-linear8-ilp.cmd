check linear:8 linear8-ilp.plan.json --budget 6
